"""Agents as processes (``edge-cli run`` on mock pins, each with a config and state directory of
its own), as on the machines of a fleet: started once connected to the broker, stopped whatever
state they were left in (a SIGSTOP included)."""

from __future__ import annotations

import contextlib
import signal
import subprocess
from pathlib import Path

from edge.control import client
from tests.helpers import EDGE_CLI, ROOT, wait_for


def node_env(base_env: dict[str, str], folder: Path, text: str) -> dict[str, str]:
    """The environment of a machine whose config is ``text`` and state is ``folder/state``."""
    folder.mkdir(parents=True, exist_ok=True)
    config = folder / "config.toml"
    config.write_text(text)
    return dict(base_env, EDGE_CONFIG=str(config), EDGE_STATE_DIR=str(folder / "state"))


def start_node(env: dict[str, str]) -> subprocess.Popen[str]:
    """``edge-cli run`` under ``env``, returned once it is connected to the broker."""
    proc = subprocess.Popen([*EDGE_CLI, "run"], env=env, cwd=ROOT, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    sock = Path(env["EDGE_STATE_DIR"]) / "control.sock"

    def connected() -> bool:
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else "agent exited"
        if not sock.exists():
            return False
        mqtt = client.request([sock], "status")["data"].get("mqtt") or {}
        return bool(mqtt.get("connected"))

    wait_for(connected, 60, 0.05)
    return proc


def stop_node(proc: subprocess.Popen[str]) -> None:
    """Stop it (woken first, if a test stopped it with SIGSTOP); killed if it will not go."""
    if proc.poll() is not None:
        return
    with contextlib.suppress(ValueError):
        proc.send_signal(signal.SIGCONT)
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
