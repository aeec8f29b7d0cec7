"""The lights MCP server (tests/mcp/servers/lights.py) as a stdio command or over streamable HTTP
on loopback, and configs that give its tools to an agent on the loopback Telegram API."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.mosquitto import free_port
from tests.helpers import ROOT

ALLOW = '["light_level", "switch_light", "set_scene", "hang", "crash"]'



@pytest.fixture
def lights_files(tmp_path: Path) -> dict[str, Path]:
    """Where the server notes each start and each switch."""
    return {"starts": tmp_path / "lights-starts.txt", "log": tmp_path / "lights-log.txt"}


@pytest.fixture
def stdio_lights(lights_files: dict[str, Path]) -> str:
    """``[[mcp.servers]]`` for the lights server run as a stdio subprocess."""
    return f"""
[[mcp.servers]]
name = "lights"
command = "{sys.executable}"
args = ["-m", "tests.mcp.servers.lights"]
env = {{ PYTHONPATH = "{ROOT}", LIGHTS_STARTS = "{lights_files['starts']}", LIGHTS_LOG = "{lights_files['log']}" }}
paths = ["{ROOT}"]
writable_paths = ["{lights_files['log'].parent}"]
allow = {ALLOW}
actuates = ["switch_light"]
timeout_seconds = 3
"""


@pytest.fixture
def http_lights(lights_files: dict[str, Path]) -> Iterator[str]:
    """The lights server over streamable HTTP on a loopback port, and its ``[[mcp.servers]]``."""
    port = free_port()
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin",
           "LIGHTS_LOG": str(lights_files["log"])}
    proc = subprocess.Popen([sys.executable, "-m", "tests.mcp.servers.lights", "--http", str(port)],
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 20
    while True:
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else "server exited"
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            assert time.monotonic() < deadline, "the HTTP MCP server did not start"
            time.sleep(0.05)
    yield f"""
[[mcp.servers]]
name = "lights"
url = "http://127.0.0.1:{port}/mcp"
headers = {{ Authorization = "Bearer not-checked-here" }}
allow = {ALLOW}
actuates = ["switch_light"]
timeout_seconds = 3
"""
    proc.terminate()
    proc.wait(10)
