"""edge-cli as a user runs it: exit codes, --json, config commands, direct mode."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import cli


def test_version(isolated_env):
    out = cli("--version", env=isolated_env)
    assert out.returncode == 0 and out.stdout.startswith("edge-cli 0.")


def test_help_lists_commands_and_exit_codes(isolated_env):
    out = cli("--help", env=isolated_env)
    for word in ("run", "status", "pins", "gpio", "config", "exit codes"):
        assert word in out.stdout


def test_bad_usage_exits_2(isolated_env):
    assert cli("gpio", "write", "led", "maybe", env=isolated_env).returncode == 2
    assert cli("frobnicate", env=isolated_env).returncode == 2


def test_config_init_check_show(isolated_env, tmp_path):
    path = tmp_path / "cfg.toml"
    assert cli("config", "init", str(path), env=isolated_env).returncode == 0
    assert "[boards.gpio.pins]" in path.read_text()
    again = cli("config", "init", str(path), env=isolated_env)
    assert again.returncode == 2 and "--force" in again.stderr
    assert cli("config", "check", "--config", str(path), env=isolated_env).returncode == 0
    env = dict(isolated_env, EDGE_PROVIDER__API_KEY="sk-very-secret")
    shown = cli("config", "show", "--json", "--config", str(path), env=env)
    data = json.loads(shown.stdout)
    assert data["data"]["config"]["provider"]["api_key"] == "**********"
    assert "sk-very-secret" not in shown.stdout
    assert "sk-very-secret" not in cli("config", "show", env=env).stdout


def test_config_check_rejects_bad_files_with_exit_2(isolated_env, tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text('[boards.gpio.pins]\nGPIO99 = { mode = "output" }\n')
    out = cli("config", "check", "--config", str(path), env=isolated_env)
    assert out.returncode == 2 and "boards.gpio.pins.GPIO99" in out.stderr
    out = cli("gpio", "read", "led", "--config", str(path), env=isolated_env)
    assert out.returncode == 2


def test_direct_mode_without_daemon(isolated_env):
    # the Pi header keeps no level once the command exits: no agent, no --hold, no write
    out = cli("gpio", "write", "led", "on", "--json", env=isolated_env)
    data = json.loads(out.stdout)
    assert out.returncode == 1 and data["via"] == "direct" and "--hold SECONDS" in data["error"]
    assert "edge-cli run" in data["error"]
    out = cli("gpio", "write", "led", "on", "--hold", "0.2", "--json", env=isolated_env)
    data = json.loads(out.stdout)
    assert out.returncode == 0 and data["via"] == "direct", out.stdout + out.stderr
    assert data["data"]["value"] == 1.0 and data["data"]["held"] is True
    assert data["data"]["restored"] is True and data["data"]["value_after"] == 0.0
    out = cli("gpio", "read", "led", env=isolated_env)
    assert out.returncode == 1 and "no agent is driving it" in out.stderr
    assert cli("gpio", "write", "led", "on", "--hold", "0", env=isolated_env).returncode == 2
    refused = cli("gpio", "write", "GPIO22", "on", env=isolated_env)
    assert refused.returncode == 1 and "not in the allowlist" in refused.stderr
    status = json.loads(cli("status", "--json", env=isolated_env).stdout)
    assert status["data"]["daemon"]["running"] is False


@pytest.mark.parametrize("args", [("gpio", "read", "GPIO99"), ("gpio", "pwm", "led", "0.5")])
def test_failed_actions_exit_1(isolated_env, args):
    out = cli(*args, "--json", env=isolated_env)
    assert out.returncode == 1 and json.loads(out.stdout)["ok"] is False


def test_piped_run_shows_the_led_on(isolated_env):
    out = cli("run", env=isolated_env, stdin="/gpio led on\n/pins\n")
    assert out.returncode == 0
    assert "gpio:GPIO17 (led) output = on" in out.stdout
    assert "SIMULATED" in out.stderr and "safe_state board=gpio pin=GPIO17 value=off" in out.stderr


def test_command_map_names_every_command_its_module_registers():
    import argparse

    from edge.cli.main import COMMAND_MODULES, build_parser, command_in

    full = build_parser()
    commands = next(a for a in full._actions if isinstance(a, argparse._SubParsersAction)).choices
    assert set(commands) == set(COMMAND_MODULES)
    for command in COMMAND_MODULES:
        only = build_parser(command)
        sub = next(a for a in only._actions if isinstance(a, argparse._SubParsersAction))
        assert command in sub.choices
        assert {c for c, m in COMMAND_MODULES.items() if m == COMMAND_MODULES[command]} == set(sub.choices)
    assert command_in(["--config", "status", "pins"]) == "pins"
    assert command_in(["--json", "gpio", "read", "led"]) == "gpio"
    assert command_in(["--help"]) is None


def test_options_before_the_command_and_unknown_commands(isolated_env, tmp_path):
    out = cli("--json", "pins", env=isolated_env)
    assert out.returncode == 0 and json.loads(out.stdout)["ok"] is True
    out = cli("gpoi", "read", "led", env=isolated_env)
    assert out.returncode == 2 and "invalid choice: 'gpoi'" in out.stderr and "gpio" in out.stderr


UNPLUGGED_UNO = """
[boards.gpio]
type = "gpio"
simulate = true
aliases = { led = "GPIO17" }
[boards.gpio.pins]
led = { mode = "output", safe = "off" }

[boards.uno]
type = "arduino"
port = "{port}"
aliases = { lamp = "D13" }
[boards.uno.pins]
lamp = { mode = "output", safe = "off" }
"""


def test_an_unplugged_board_does_not_stop_one_shot_commands_on_the_others(isolated_env,
                                                                          write_config, tmp_path):
    config = str(write_config(UNPLUGGED_UNO.replace("{port}", str(tmp_path / "ttyACM9"))))
    out = cli("gpio", "write", "led", "on", "--hold", "0.1", "--json", "--config", config,
              env=isolated_env)
    assert out.returncode == 0 and json.loads(out.stdout)["data"]["value"] == 1.0
    out = cli("gpio", "write", "lamp", "on", "--json", "--config", config, env=isolated_env)
    error = json.loads(out.stdout)["error"]
    assert out.returncode == 1 and "board uno is not connected" in error and "ttyACM9" in error
    assert "Traceback" not in out.stderr and "Exception ignored" not in out.stderr
    boards = json.loads(cli("status", "--json", "--config", config, env=isolated_env).stdout)
    uno = next(b for b in boards["data"]["boards"] if b["name"] == "uno")
    assert uno["connected"] is False and "cannot open" in uno["detail"]


def test_one_shot_actuations_share_the_rate_limit_and_are_logged(isolated_env, write_config):
    config = str(write_config("[security]\nmax_actuations_per_minute = 3\n"))
    log = Path(isolated_env["EDGE_STATE_DIR"]) / "edge-agent.log"
    for _ in range(3):
        out = cli("gpio", "write", "led", "on", "--hold", "0.01", "--config", config, env=isolated_env)
        assert out.returncode == 0, out.stderr
    refused = cli("gpio", "write", "led", "on", "--hold", "0.01", "--config", config, env=isolated_env)
    assert refused.returncode == 1 and "rate limit" in refused.stderr
    assert "policy_refused" not in refused.stderr  # the friendly error only...
    text = log.read_text()  # ...and every event in the log, as the agent's own
    assert text.count("event=actuation board=gpio pin=GPIO17 value=on by=cli:") == 3
    assert text.count("event=safe_state board=gpio pin=GPIO17 value=off") == 3  # a hold's end is free
    assert "event=policy_refused" in text


@pytest.mark.parametrize("args", [("gpio", "pwm", "led", "2"), ("gpio", "pwm", "led", "0.5", "--frequency", "-1"),
                                  ("gpio", "write", "led", "maybe"), ("gpoi",), ("run",)])
def test_usage_errors_exit_2_and_speak_json_when_asked(isolated_env, args):
    out = cli(*args, "--json", env=isolated_env)
    data = json.loads(out.stdout)  # one JSON object on stdout, whatever went wrong
    assert out.returncode == 2 and data == {"ok": False, "error": data["error"], "exit_code": 2, "data": {}}
    assert "pydantic" not in data["error"] and "Traceback" not in out.stderr


def test_status_without_an_agent_exits_3_and_names_no_pid(isolated_env):
    out = cli("status", "--json", env=isolated_env)
    daemon = json.loads(out.stdout)["data"]["daemon"]
    assert out.returncode == 3 and daemon["running"] is False and daemon["pid"] is None
    assert cli("status", env=isolated_env).returncode == 3


def test_a_piped_run_that_gets_no_answer_exits_1(isolated_env, write_config):
    config = str(write_config('[provider]\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"\n'
                              "timeout_seconds = 2\nmax_retries = 0\n"))
    out = cli("run", "--config", config, env=isolated_env, stdin="hello\n", timeout=120)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "could not answer" in out.stdout
