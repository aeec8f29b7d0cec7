"""A stdio server in its sandbox cannot reach the agent that started it: the hostile server
(tests/mcp/servers/hostile.py), run by a real agent (a control socket, gpiozero's mock pins, the
loopback Telegram API and model), tries the control socket, the state directory, the config
and the agent's environment. The same server with ``sandbox = false`` gets them all, so the
attempts are real ones. Without a usable bubblewrap a sandboxed server is refused, and says so."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from edge.config.mcp import McpServerConfig
from edge.doctor.mcp_servers import check_mcp_servers, probe_check
from edge.mcp.client import ServerLink
from edge.mcp.sandbox import Places, bwrap_usable, launch
from edge.status_lines import mcp_servers_line
from tests.fakes.openai_server import OpenAIServer
from tests.fakes.telegram_server import telegram_config, texts_to
from tests.helpers import ROOT, until
from tests.mcp.test_client import call, model_config, say, tool_results

SECRET = "sk-test-secret-372"
PINS = """
[security]
autonomy = "full"
[boards.gpio.aliases]
led = "GPIO17"
[boards.gpio.pins]
led = { mode = "output", safe = "off" }
"""


def hostile(tmp_path: Path, sandbox: bool) -> str:
    """The hostile server's entry: it may read the repository and all of ``tmp_path`` (where
    the agent's config and state directory are: those stay hidden)."""
    return f"""
[[mcp.servers]]
name = "hostile"
command = "{sys.executable}"
args = ["-m", "tests.mcp.servers.hostile"]
env = {{ PYTHONPATH = "{ROOT}" }}
paths = ["{ROOT}", "{tmp_path}"]
allow = ["break_out"]
sandbox = {str(sandbox).lower()}
timeout_seconds = 10
"""


async def break_out(telegram, start_agent, mock_factory, tmp_path: Path,
                    sandbox: bool) -> tuple[dict[str, str], Any]:
    places = {"socket_path": str(tmp_path / "state" / "control.sock"),
              "state_dir": str(tmp_path / "state"), "config_file": str(tmp_path / "config.toml"),
              "agent_pid": os.getpid(), "secret_name": "EDGE_PROVIDER__API_KEY"}
    with OpenAIServer([call("hostile__break_out", places), say("tried")]) as model:
        config = (telegram_config(telegram) + model_config(model).replace(
            '[provider]\n', f'[provider]\napi_key = "{SECRET}"\n') + PINS
                  + hostile(tmp_path, sandbox))
        agent = await start_agent(config)
        assert agent.runtime.loaded.control_socket == Path(places["socket_path"])
        assert Path(places["socket_path"]).exists()
        telegram.push_message(42, "go")
        await until(lambda: [t for t in texts_to(telegram, 42) if "tried" in t], timeout=30)
        got = json.loads(tool_results(model)[0])
        return got, agent


async def test_the_hostile_server_reaches_nothing_of_the_agent_from_its_sandbox(
        telegram, start_agent, mock_factory, tmp_path, monkeypatch):
    monkeypatch.setenv("EDGE_PROVIDER__API_KEY", SECRET)
    got, agent = await break_out(telegram, start_agent, mock_factory, tmp_path, sandbox=True)
    assert got["control socket"].startswith("failed"), got
    assert got["audit trail"].startswith("failed"), got
    assert got["state dir"] in ("GOT []", "failed: FileNotFoundError"), got
    assert got["service config"].startswith("failed"), got
    assert got["agent environ"].startswith("failed"), got
    assert got["own environ"] == "failed: KeyError", got
    assert got["working dir"] == "/home/mcp"
    assert SECRET not in json.dumps(got)
    assert mock_factory.pin(17).state == 0  # the led never moved
    row = (await agent.runtime.status())["mcp"]["servers"][0]
    assert row["sandbox"] == "on"
    scratch = tmp_path / "state" / "mcp-scratch" / "hostile"
    assert scratch.is_dir()


async def test_the_same_server_unsandboxed_gets_the_socket_and_the_config(
        telegram, start_agent, mock_factory, tmp_path, monkeypatch):
    """The attempts above are real: without the sandbox each one succeeds."""
    monkeypatch.setenv("EDGE_PROVIDER__API_KEY", SECRET)
    got, agent = await break_out(telegram, start_agent, mock_factory, tmp_path, sandbox=False)
    assert got["control socket"].startswith("GOT"), got
    assert SECRET in got["config file"]
    assert "audit.db" in got["state dir"]
    assert got["agent environ"].startswith("GOT"), got
    assert mock_factory.pin(17).state == 1
    row = (await agent.runtime.status())["mcp"]["servers"][0]
    assert row["sandbox"] == "off"
    assert "unsandboxed" in (mcp_servers_line((await agent.runtime.status())["mcp"]) or "")
    checks = await asyncio.to_thread(check_mcp_servers, agent.runtime.loaded)
    assert checks[0].status == "warn" and "UNSANDBOXED" in checks[0].detail


def lights(**overrides: Any) -> McpServerConfig:
    fields: dict[str, Any] = {
        "name": "lights", "command": sys.executable, "args": ["-m", "tests.mcp.servers.lights"],
        "env": {"PYTHONPATH": str(ROOT)}, "paths": [str(ROOT)], "allow": ["light_level"],
        "timeout_seconds": 5}
    return McpServerConfig(**{**fields, **overrides})


async def test_without_bubblewrap_a_sandboxed_server_is_refused_and_says_why(tmp_path):
    places = Places(tmp_path / "state", tmp_path / "state")
    with pytest.raises(Exception, match="not started: no sandbox: /nonexistent/bwrap is not "
                                        "installed: sudo apt install bubblewrap"):
        launch(lights(), places, bwrap="/nonexistent/bwrap")
    unsandboxed = launch(lights(sandbox=False), places, bwrap="/nonexistent/bwrap")
    assert not unsandboxed.sandboxed and unsandboxed.argv[0] == sys.executable
    assert unsandboxed.cwd == str(places.scratch("lights"))


async def test_a_refused_server_is_down_with_the_reason_in_status_and_doctor(
        tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no bwrap on it
    bwrap_usable.cache_clear()
    try:
        link = ServerLink(lights(), places=Places(tmp_path / "state", tmp_path / "state"),
                          backoff_start=10)
        link.task.start()
        await until(lambda: link.listed.is_set())
        row = link.row()
        assert not row["connected"] and row["sandbox"] == "refused"
        assert row["last_error"].startswith("not started: no sandbox: bwrap is not installed")
        await link.task.aclose()
        check = await asyncio.to_thread(probe_check, lights(), Places(tmp_path, tmp_path))
        assert check.status == "fail" and "refused: no sandbox here" in check.detail
    finally:
        bwrap_usable.cache_clear()


def test_doctor_says_a_server_is_sandboxed(tmp_path):
    check = probe_check(lights(), Places(tmp_path / "state", tmp_path / "state"))
    assert check.status == "ok" and check.detail.endswith("; sandboxed"), check.detail


def test_sandbox_keys_are_checked(tmp_path):
    with pytest.raises(ValidationError, match="is not an absolute path"):
        lights(paths=["data"])
    # a path that is not there (a USB stick not mounted yet) stops that server from starting,
    # saying which; the config, and so the agent, still loads
    missing = lights(writable_paths=["/nonexistent/data"])
    with pytest.raises(FileNotFoundError, match="does not exist .*: '/nonexistent/data'"):
        launch(missing, Places(tmp_path / "state", tmp_path / "state"))
    with pytest.raises(ValidationError, match="are for a command server; a url server runs"):
        McpServerConfig(name="ha", url="http://ha.lan/mcp", sandbox=False)
    assert lights(paths=[f"{tmp_path}/"]).paths == [str(tmp_path)]
