"""Interlocks at the doors outside the process: ``edge-cli gpio write`` through a running agent
is refused with exit 1 and the interlock's words; ``edge-cli interlocks [--json]`` lists them
through the agent and from the config alone; ``/interlocks`` in chat."""

from __future__ import annotations

import json
import subprocess
import time

import pytest

from edge.agent.commands import CommandContext, run_command
from edge.config.loader import load_config
from edge.runtime import Runtime
from tests.helpers import EDGE_CLI, ROOT, asker, cli

CONFIG = """
[boards.gpio.aliases]
led = "GPIO17"
heater = "GPIO22"
[boards.gpio.pins]
led = { mode = "output", safe = "off" }
heater = { mode = "output", safe = "off" }

[[interlocks]]
name = "one-at-a-time"
exclusive = ["led", "heater"]
"""


@pytest.fixture
def agent_env(isolated_env, write_config):
    return {**isolated_env, "EDGE_CONFIG": str(write_config(CONFIG))}


@pytest.fixture
def daemon(agent_env, tmp_path):
    socket_path = tmp_path / "state" / "control.sock"
    proc = subprocess.Popen([*EDGE_CLI, "run"], env=agent_env, cwd=ROOT, text=True,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    deadline = time.monotonic() + 20
    while not socket_path.exists():
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        assert time.monotonic() < deadline, "daemon did not start"
        time.sleep(0.05)
    yield proc
    if proc.poll() is None:
        proc.kill()
        proc.wait()


def test_edge_cli_is_refused_through_the_agent_with_exit_1(daemon, agent_env):
    assert cli("gpio", "write", "heater", "on", env=agent_env).returncode == 0
    refused = cli("gpio", "write", "led", "on", env=agent_env)
    assert refused.returncode == 1
    assert "led: refused by interlock one-at-a-time (heater is on)" in refused.stderr + refused.stdout
    listed = cli("interlocks", "--json", env=agent_env)
    data = json.loads(listed.stdout)
    assert listed.returncode == 0 and data["via"] == "daemon"
    assert data["data"]["interlocks"] == [{
        "name": "one-at-a-time", "shape": "exclusive", "rule": "exclusive led, heater",
        "active": None, "why": None, "on": ["heater"], "tripped": None}]
    text = cli("interlocks", env=agent_env)
    assert "one-at-a-time: exclusive led, heater: on now heater" in text.stdout


def test_edge_cli_lists_them_from_the_config_without_an_agent(agent_env):
    listed = cli("interlocks", "--json", env=agent_env)
    data = json.loads(listed.stdout)
    assert listed.returncode == 0 and data["via"] == "direct"
    assert [row["name"] for row in data["data"]["interlocks"]] == ["one-at-a-time"]


async def test_slash_interlocks_in_chat(agent_env, mock_factory):
    runtime = Runtime(load_config(env=agent_env), resident=True, pin_factory=mock_factory)
    ctx = CommandContext(tools=runtime.tools, status_text=_no_status, requester=asker("cli:me"))
    assert "one-at-a-time: exclusive led, heater" in (await run_command("/interlocks", ctx) or "")
    assert "/interlocks" in (await run_command("/help", ctx) or "")


async def _no_status(**_: object) -> str:
    return ""


def test_config_check_refuses_an_interlock_that_could_never_hold(isolated_env, write_config):
    bad = CONFIG + '\n[[interlocks]]\nname = "dry"\nforbid = "led off"\nwhile = "heater on"\n'
    path = write_config(bad)
    checked = cli("config", "check", env={**isolated_env, "EDGE_CONFIG": str(path)})
    assert checked.returncode == 2 and checked.stdout == ""
    assert checked.stderr.splitlines() == [
        f"edge-cli: {path}: invalid configuration",
        "  interlocks.1.forbid: interlock 'dry': forbid 'led off' contradicts the pin's safe level "
        "(off): the interlock would forbid the state it trips to"], checked.stderr
