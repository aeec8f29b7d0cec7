"""One-shot commands as a user runs them, directly and through a running agent: a hold that
``max_on_seconds`` would cut short is refused on both doors, ``--json`` agrees with the exit
code, and errors are said once."""

from __future__ import annotations

import json

import pytest

from tests.helpers import cli, start_agent

TIMED_LED = """
[boards.gpio]
aliases = { led = "GPIO17", button = "GPIO27" }
[boards.gpio.pins]
led = { mode = "output", safe = "off", max_on_seconds = 3 }
button = { mode = "input" }
"""


@pytest.fixture
def timed_env(isolated_env, write_config):
    return dict(isolated_env, EDGE_CONFIG=str(write_config(TIMED_LED)))


def assert_hold_refused(out):
    assert out.returncode == 1, out.stdout + out.stderr
    assert "held" not in out.stdout and out.stdout == ""
    assert out.stderr.startswith("edge-cli: gpio:GPIO17 (led) has max_on_seconds = 3: it goes off "
                                 "after 3 s, before a hold of 6 s ends; hold it for at most 3 s "
                                 "(--hold 3), or raise max_on_seconds in [boards.gpio.pins]")


def test_a_hold_longer_than_max_on_seconds_is_refused_without_an_agent(timed_env):
    assert_hold_refused(cli("gpio", "write", "led", "on", "--hold", "6", env=timed_env))
    out = cli("gpio", "write", "led", "on", "--hold", "6", "--json", env=timed_env)
    data = json.loads(out.stdout)
    assert out.returncode == 1 and data["ok"] is False and data["exit_code"] == 1
    assert "max_on_seconds = 3" in data["error"] and data["via"] == "direct"


def test_a_hold_longer_than_max_on_seconds_is_refused_by_the_running_agent(timed_env):
    agent = start_agent(timed_env)
    try:
        assert_hold_refused(cli("gpio", "write", "led", "on", "--hold", "6", env=timed_env))
        read = json.loads(cli("gpio", "read", "led", "--json", env=timed_env).stdout)
        assert read["via"] == "daemon" and read["data"]["value"] == 0.0  # never switched on
        held = cli("gpio", "write", "led", "on", "--hold", "0.2", "--json", env=timed_env)
        assert held.returncode == 0 and json.loads(held.stdout)["data"]["held"] is True
    finally:
        agent.terminate()
        agent.wait(timeout=20)
    with open(timed_env["EDGE_STATE_DIR"] + "/edge-agent.log") as log:  # the agent refused it
        assert "event=hold_refused board=gpio pin=GPIO17 hold=6 max_on_seconds=3" in log.read()
    history = json.loads(cli("history", "led", "--json", env=timed_env).stdout)["data"]
    refused = [r for r in history["records"] if r["outcome"] == "refused"]
    assert len(refused) == 1 and "max_on_seconds = 3" in refused[0]["reason"], history


def test_status_json_agrees_with_the_exit_code_when_no_agent_runs(isolated_env):
    out = cli("status", "--json", env=isolated_env)
    data = json.loads(out.stdout)
    assert out.returncode == 3 and data["exit_code"] == 3 and data["ok"] is False
    assert "no agent is running" in data["error"] and data["data"]["daemon"]["running"] is False
    text = cli("status", env=isolated_env)
    assert text.returncode == 3 and "daemon not running" in text.stdout and text.stderr == ""


def test_every_json_outcome_has_ok_error_and_exit_code(isolated_env):
    ok = json.loads(cli("pins", "--json", env=isolated_env).stdout)
    assert ok["ok"] is True and ok["error"] is None and ok["exit_code"] == 0
    failed = json.loads(cli("gpio", "read", "GPIO99", "--json", env=isolated_env).stdout)
    assert failed["ok"] is False and failed["error"] and failed["exit_code"] == 1


def test_an_unknown_pin_or_board_is_said_once(isolated_env):
    out = cli("gpio", "read", "nosuchpin", env=isolated_env)
    assert out.returncode == 1 and out.stderr == (
        "edge-cli: 'nosuchpin' is not a pin on board gpio; the allowlisted pins are "
        "gpio:GPIO17 (led), gpio:GPIO27 (button)\n")
    out = cli("gpio", "read", "uno:D2", env=isolated_env)
    assert out.returncode == 1 and out.stderr.startswith(
        "edge-cli: there is no board 'uno' (boards: gpio); write BOARD:PIN with one of them")


def test_status_says_the_pins_are_simulated_by_default(isolated_env):
    out = cli("status", env=isolated_env)
    assert ("board gpio (gpio): connected, simulated pins (simulate is on by default; set "
            "[boards.gpio] simulate = false on a Pi to drive the real header)") in out.stdout
    assert "simulate = true in config" not in out.stdout
