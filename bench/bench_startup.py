"""Start-up and footprint: `edge-cli --version`, `edge-cli status` against the daemon, daemon
ready time and idle RSS (without and with the embedding model), and a one-shot agent turn
against a zero-latency model.

Targets (brief, issue 24): --version at or under a bare `python3 -c pass`; status via the daemon
50 ms; daemon ready 0.3 s; one-shot turn against a zero-latency model 0.3 s. Idle RSS at ready +
20 s: at most the floor + 10 MB without the embedding model and at most 100 MB with it; the floor,
measured in the same run, is a bare interpreter that imports asyncio, sqlite3, httpx and pydantic
and defines one model (what any agent on this stack holds before it does anything).

History: before issue 16 the idle figures were 41.1 and 121.9 MB; by November 2026 43.2 MB without
the model, 41.4 MB after loading on first use what an idle agent does not need (sensor drivers, the
provider stack without a model, the turn's steps, logging.handlers). A hand-written validation
layer (edge.records) then took pydantic out (about 32 MB idle); issue 24 brought pydantic back as
the named stack's validation layer, and this bench says what it costs.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.process import BIN, repeat, row, rss_kib

ROOT = Path(__file__).resolve().parents[1]


def isolated_env(state: Path, embedder: str = "none") -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EDGE_")}
    env.update(EDGE_STATE_DIR=str(state), HOME=str(state), XDG_CONFIG_HOME=str(state / "cfg"),
               EDGE_MEMORY__EMBEDDER=embedder)
    return env


IDLE_AFTER_READY_SECONDS = 20.0
BEFORE_IDLE_WITH_MODEL_MB = 121.9
IDLE_OVER_FLOOR_MB = 10.0
"""Target: idle RSS without the embedding model at most the floor plus this."""

STACK = "import asyncio, sqlite3, httpx\n"
ONE_MODEL = "from pydantic import BaseModel\nclass Pin(BaseModel):\n    mode: str = 'output'\nPin(mode='input')\n"
FLOOR = STACK + ONE_MODEL
"""The floor: a bare interpreter with the stack every agent loads, and one pydantic model."""


def idle_rss_with_model(state: Path, cli: str) -> tuple[float, int]:
    """(seconds until the embedding model is loaded, RSS at ready + 20 s) for a daemon on
    defaults; its first start re-quantises the model (in a child process)."""
    env = isolated_env(state, embedder="onnx")
    start = time.perf_counter()
    daemon = subprocess.Popen([cli, "run"], env=env, stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    ready = None
    try:
        assert daemon.stderr is not None
        for line in daemon.stderr:
            if ready is None and " event=ready " in line:
                ready = time.perf_counter()
            if "embedding_model_loaded" in line and ready is not None:
                loaded = time.perf_counter() - start
                time.sleep(max(0.0, ready + IDLE_AFTER_READY_SECONDS - time.perf_counter()))
                return loaded, rss_kib(daemon.pid)
        raise RuntimeError("the daemon exited before loading the embedding model")
    finally:
        daemon.terminate()
        daemon.wait()


def wait_for(path: Path, proc: subprocess.Popen[bytes], timeout: float = 20.0) -> float:
    start = time.perf_counter()
    while not path.exists():
        if proc.poll() is not None or time.perf_counter() - start > timeout:
            raise RuntimeError("daemon did not start")
        time.sleep(0.002)
    return time.perf_counter() - start


def byte_compile() -> None:
    """Compile our sources as ``pip install`` does for an installed package: an editable
    checkout under PYTHONDONTWRITEBYTECODE would otherwise recompile every module on every run."""
    import compileall

    for package in ("edge", "peripherals"):
        compileall.compile_dir(ROOT / package, quiet=1)


def main() -> None:
    cli = str(BIN / "edge-cli")
    python = sys.executable
    byte_compile()
    with tempfile.TemporaryDirectory() as tmp:
        state = Path(tmp)
        env = isolated_env(state)
        base_t, base_rss = repeat([python, "-c", "pass"], env=env)
        row("baseline python3 -c pass", f"{base_t * 1000:.1f} ms", ratio="1.00x")
        row("baseline python3 -c pass RSS", f"{base_rss / 1024:.1f} MB", ratio="1.00x")
        ver_t, ver_rss = repeat([cli, "--version"], env=env)
        row("edge-cli --version", f"{ver_t * 1000:.1f} ms", "target <= 1.00x", f"{ver_t / base_t:.2f}x")
        row("edge-cli --version RSS", f"{ver_rss / 1024:.1f} MB", "",
            f"{ver_rss / base_rss:.2f}x")
        floor_t, floor_rss = repeat([python, "-c", FLOOR], env=env)
        row("floor: asyncio, sqlite3, httpx, pydantic + 1 model", f"{floor_rss / 1024:.1f} MB",
            f"{floor_t * 1000:.0f} ms")
        stack_t, stack_rss = repeat([python, "-c", STACK], env=env)
        row("pydantic's cost in the floor (import + 1 model)", f"{(floor_rss - stack_rss) / 1024:+.1f} MB",
            f"{(floor_t - stack_t) * 1000:+.0f} ms")

        sock = state / "control.sock"
        start = time.perf_counter()
        daemon = subprocess.Popen([cli, "run"], env=env, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            ready = wait_for(sock, daemon)
            ready = time.perf_counter() - start
            row("daemon ready (socket listening)", f"{ready * 1000:.0f} ms", "target 300 ms",
                f"{ready / 0.3:.2f}x")
            time.sleep(IDLE_AFTER_READY_SECONDS)
            idle = rss_kib(daemon.pid)
            ceiling = floor_rss / 1024 + IDLE_OVER_FLOOR_MB
            row("daemon idle RSS at ready + 20 s (no embedding model)", f"{idle / 1024:.1f} MB",
                f"target floor + {IDLE_OVER_FLOOR_MB:g} = {ceiling:.1f} MB "
                f"(floor + {(idle - floor_rss) / 1024:.1f} MB)", f"{idle / 1024 / ceiling:.2f}x")
            st_t, st_rss = repeat([cli, "status"], env=env)
            row("edge-cli status via daemon", f"{st_t * 1000:.1f} ms", "target 50 ms",
                f"{st_t / 0.05:.2f}x")
            row("edge-cli status RSS", f"{st_rss / 1024:.1f} MB")
            gp_t, _ = repeat([cli, "gpio", "write", "led", "on"], env=env)
            row("edge-cli gpio write via daemon", f"{gp_t * 1000:.1f} ms")
        finally:
            daemon.terminate()
            daemon.wait()

        loaded, with_model = idle_rss_with_model(state / "with-model", cli)
        row("daemon: embedding model loaded after", f"{loaded * 1000:.0f} ms",
            "first start re-quantises it once")
        row("daemon idle RSS at ready + 20 s (embedding model)", f"{with_model / 1024:.1f} MB",
            f"target 100 MB (before {BEFORE_IDLE_WITH_MODEL_MB} MB)", f"{with_model / 1024 / 100:.2f}x")

        from tests.fakes.openai_server import OpenAIServer, completion

        with OpenAIServer([(200, completion("hi"))] * 40) as server:
            for embedder, label in (("none", "keyword memory"), ("onnx", "embedding memory")):
                turn_env = dict(isolated_env(state / embedder, embedder),
                                EDGE_PROVIDER__BASE_URL=server.base_url, EDGE_PROVIDER__MODEL="zero")
                turn_t, turn_rss = repeat([cli, "run"], runs=8, env=turn_env, stdin=b"hello\n")
                row(f"one-shot turn ({label})", f"{turn_t * 1000:.0f} ms", "target 300 ms",
                    f"{turn_t / 0.3:.2f}x")
                row(f"one-shot turn peak RSS ({label})", f"{turn_rss / 1024:.1f} MB")
