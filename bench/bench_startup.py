"""Start-up and footprint: `edge-cli --version`, `edge-cli status` against the daemon, daemon
ready time and idle RSS, and a one-shot agent turn against a zero-latency model.

Targets (brief): --version within 3x a bare `python3 -c pass`; status 100 ms; daemon ready 0.5 s and
idle under 40 MB (no embedding model); one-shot turn 0.4 s.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.process import BIN, repeat, row, rss_kib, run_measured

ROOT = Path(__file__).resolve().parents[1]


def isolated_env(state: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EDGE_")}
    env.update(EDGE_STATE_DIR=str(state), HOME=str(state), XDG_CONFIG_HOME=str(state / "cfg"))
    return env


def wait_for(path: Path, proc: subprocess.Popen, timeout: float = 20.0) -> float:
    start = time.perf_counter()
    while not path.exists():
        if proc.poll() is not None or time.perf_counter() - start > timeout:
            raise RuntimeError("daemon did not start")
        time.sleep(0.002)
    return time.perf_counter() - start


def main() -> None:
    cli = str(BIN / "edge-cli")
    python = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        state = Path(tmp)
        env = isolated_env(state)
        base_t, base_rss = repeat([python, "-c", "pass"], env=env)
        row("baseline python3 -c pass", f"{base_t * 1000:.1f} ms", ratio="1.00x")
        row("baseline python3 -c pass RSS", f"{base_rss / 1024:.1f} MB", ratio="1.00x")
        ver_t, ver_rss = repeat([cli, "--version"], env=env)
        row("edge-cli --version", f"{ver_t * 1000:.1f} ms", "target <= 3.00x", f"{ver_t / base_t:.2f}x")
        row("edge-cli --version RSS", f"{ver_rss / 1024:.1f} MB", "target <= 3.00x",
            f"{ver_rss / base_rss:.2f}x")

        sock = state / "control.sock"
        start = time.perf_counter()
        daemon = subprocess.Popen([cli, "run"], env=env, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            ready = wait_for(sock, daemon)
            ready = time.perf_counter() - start
            row("daemon ready (socket listening)", f"{ready * 1000:.0f} ms", "target 500 ms",
                f"{ready / 0.5:.2f}x")
            time.sleep(1.0)
            idle = rss_kib(daemon.pid)
            row("daemon idle RSS (no embedding model)", f"{idle / 1024:.1f} MB", "target 40 MB",
                f"{idle / 1024 / 40:.2f}x")
            st_t, st_rss = repeat([cli, "status"], env=env)
            row("edge-cli status via daemon", f"{st_t * 1000:.1f} ms", "target 100 ms",
                f"{st_t / 0.1:.2f}x")
            row("edge-cli status RSS", f"{st_rss / 1024:.1f} MB")
            gp_t, _ = repeat([cli, "gpio", "write", "led", "on"], env=env)
            row("edge-cli gpio write via daemon", f"{gp_t * 1000:.1f} ms")
        finally:
            daemon.terminate()
            daemon.wait()

        from tests.fakes.openai_server import OpenAIServer, completion

        with OpenAIServer([(200, completion("hi"))] * 40) as server:
            turn_env = dict(env, EDGE_PROVIDER__BASE_URL=server.base_url, EDGE_PROVIDER__MODEL="zero")
            turn_t, turn_rss = repeat([cli, "run"], runs=10, env=turn_env, stdin=b"hello\n")
        row("one-shot turn (run, 1 message, exit)", f"{turn_t * 1000:.0f} ms", "target 400 ms",
            f"{turn_t / 0.4:.2f}x")
        row("one-shot turn peak RSS", f"{turn_rss / 1024:.1f} MB")
