"""`edge-cli safe-state`, what the service runs after the agent stops (ExecStopPost=): every
output of the Pi header goes to its safe level, nothing else is touched, and a running agent's
pins are left alone. Here the header is simulated (mock pins); tests/kernel drives a real chip."""

from __future__ import annotations

import json

from tests.helpers import cli, start_agent

HEADER = """
[provider]
temperature = "hot"      # a mistake outside [boards] does not stop the safe state

[boards.gpio]
type = "gpio"
simulate = true
aliases = { led = "GPIO17", relay = "GPIO22", fan = "GPIO12", button = "GPIO27" }
[boards.gpio.pins]
led = { mode = "output", safe = "off" }
relay = { mode = "output", safe = "off", active_low = true }
GPIO23 = { mode = "output", safe = "on" }
fan = { mode = "pwm" }
button = { mode = "input" }

[boards.uno]
type = "arduino"
port = "/nonexistent/ttyACM9"
[boards.uno.pins]
lamp = { mode = "output", safe = "off" }
"""


def test_every_header_output_is_reported_at_its_safe_level(isolated_env, write_config):
    config = str(write_config(HEADER))
    out = cli("safe-state", "--json", "--config", config, env=isolated_env, timeout=20)
    assert out.returncode == 0, out.stdout + out.stderr
    outputs = json.loads(out.stdout)["data"]["outputs"]
    assert [(o["board"], o["pin"], o["names"], o["safe"], o["line"], o["ok"]) for o in outputs] == [
        ("gpio", "GPIO17", ["led"], "off", "low", True),
        ("gpio", "GPIO22", ["relay"], "off", "high", True),  # active-low: off is a high line
        ("gpio", "GPIO23", [], "on", "high", True),
        ("gpio", "GPIO12", ["fan"], "off", "low", True),  # no safe level declared: off
    ]  # no input, and the Arduino's port is never opened (its firmware has a watchdog)
    assert all(o["simulated"] for o in outputs)
    text = cli("safe-state", "--config", config, env=isolated_env, timeout=20)
    assert text.returncode == 0
    assert "gpio:GPIO22 (relay) safe off (line high, mock pin)" in text.stdout


def test_systemd_tells_it_how_the_agent_ended(isolated_env, write_config):
    env = dict(isolated_env, SERVICE_RESULT="signal", EXIT_CODE="killed", EXIT_STATUS="KILL")
    out = cli("safe-state", "--config", str(write_config(HEADER)), env=env, timeout=20)
    assert out.returncode == 0
    assert "after the agent ended (service_result=signal, exit_code=killed, exit_status=KILL)" \
        in out.stdout


def test_a_header_that_cannot_be_driven_fails_with_exit_1(isolated_env, write_config):
    config = str(write_config(HEADER.replace("simulate = true", "simulate = false")))
    out = cli("safe-state", "--json", "--config", config, env=isolated_env, timeout=20)
    assert out.returncode == 1
    result = json.loads(out.stdout)
    assert "4 of 4 header outputs not at their safe level" in result["error"]
    assert all(not o["ok"] and o["error"] for o in result["data"]["outputs"])


def test_a_bad_boards_table_is_a_config_error(isolated_env, write_config):
    config = str(write_config('[boards.gpio.pins]\nGPIO17 = { mode = "output", safe = "maybe" }\n'))
    out = cli("safe-state", "--config", config, env=isolated_env, timeout=20)
    assert out.returncode == 2 and "boards.gpio.pins.GPIO17.safe" in out.stderr


def test_with_an_agent_running_it_touches_nothing(isolated_env):
    agent = start_agent(isolated_env)
    try:
        assert cli("gpio", "write", "led", "on", env=isolated_env).returncode == 0
        out = cli("safe-state", "--json", env=isolated_env, timeout=20)
        result = json.loads(out.stdout)
        assert out.returncode == 0 and result["data"]["agent_pid"] == agent.pid
        assert "an agent is running" in result["message"] and result["data"]["outputs"] == []
        read = json.loads(cli("gpio", "read", "led", "--json", env=isolated_env).stdout)
        assert read["data"]["value"] == 1.0
    finally:
        agent.terminate()
        agent.communicate(timeout=20)
