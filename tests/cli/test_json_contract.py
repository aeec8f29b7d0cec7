"""Every command's ``--json`` keeps the README's promise: whatever the outcome (success, refusal,
failure, bad usage), stdout is exactly one JSON object with ``ok``, ``error`` and ``exit_code``,
``exit_code`` is the process's own exit code, and ``ok`` is true exactly when that code is 0.

Each case runs ``edge-cli`` as a real process in an isolated home and state directory, with no
agent running (the built-in config: mock pins, no provider, no MQTT), and names the exit code
it must end with, so both sides of the contract, success and each kind of failure, are run."""

from __future__ import annotations

import json
import signal
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers import cli, start_agent

Setup = Callable[[Path], None]


def an_existing_file(tmp: Path) -> None:
    (tmp / "taken.toml").write_text("# already here\n")


def a_bad_config(tmp: Path) -> None:
    (tmp / "bad.toml").write_text('[boards.gpio.pins]\nGPIO99 = { mode = "output" }\n')


def a_damaged_audit_trail(tmp: Path) -> None:
    (tmp / "state").mkdir(exist_ok=True)
    (tmp / "state" / "audit.db").write_text("not a database\n")


def a_damaged_sensor_history(tmp: Path) -> None:
    (tmp / "state").mkdir(exist_ok=True)
    (tmp / "state" / "readings.db").write_text("not a database\n")


def a_log_file(tmp: Path) -> None:
    state = tmp / "state"
    state.mkdir(exist_ok=True)
    (state / "edge-agent.log").write_text(
        "2026-11-26T06:00:00 INFO edge.runtime: ready boards=1\n"
        "2026-11-26T06:00:01 INFO edge.runtime: stopped reason=SIGTERM\n")


CASES: list[tuple[str, list[str], set[int], Setup | None]] = [
    # config
    ("config check", ["config", "check"], {0}, None),
    ("config check, bad file", ["config", "check", "--config", "{tmp}/bad.toml"], {2}, a_bad_config),
    ("config show", ["config", "show"], {0}, None),
    ("config init", ["config", "init", "{tmp}/new.toml"], {0}, None),
    ("config init -", ["config", "init", "-"], {0}, None),
    ("config init, file exists", ["config", "init", "{tmp}/taken.toml"], {2}, an_existing_file),
    ("config init, cannot write", ["config", "init", "{tmp}/taken.toml/config.toml"], {1},
     an_existing_file),
    ("config, no action", ["config"], {2}, None),
    # service (on a scratch root)
    ("service status, not installed", ["service", "status", "--root", "{tmp}/root"], {1}, None),
    ("service install, bad source", ["service", "install", "--root", "{tmp}/root", "--source",
                                     "{tmp}/nowhere"], {2}, None),
    ("service uninstall, nothing there", ["service", "uninstall", "--root", "{tmp}/root"], {0},
     None),
    # doctor: warnings (mock pins) give 4; a machine whose clock is not synchronised fails (1)
    ("doctor", ["doctor"], {1, 4}, None),
    # logs
    ("logs", ["logs", "--source", "file"], {0}, a_log_file),
    ("logs, no file yet", ["logs", "--source", "file"], {1}, None),
    ("logs, negative -n", ["logs", "-n", "-1"], {2}, None),
    # mqtt
    ("mqtt status, no agent", ["mqtt", "status"], {1}, None),
    ("mqtt test, not configured", ["mqtt", "test"], {1}, None),
    ("mqtt test, zero timeout", ["mqtt", "test", "--timeout", "0"], {2}, None),
    # boards and firmware
    ("boards list", ["boards", "list"], {0}, None),
    ("boards discover", ["boards", "discover", "--no-probe"], {0}, None),
    ("boards discover, negative timeout", ["boards", "discover", "--timeout", "-1"], {2}, None),
    ("firmware flash, unknown board", ["firmware", "flash", "nosuch"], {2}, None),
    ("firmware build, no sources", ["firmware", "build", "arduino", "--source", "{tmp}"], {2},
     None),
    ("firmware flash, zero baud", ["firmware", "flash", "arduino", "--baud", "0"], {2}, None),
    # history, resume, safe-state, models, completion
    ("history", ["history"], {0}, None),
    ("history, damaged trail", ["history"], {1}, a_damaged_audit_trail),
    ("history, bad --since", ["history", "--since", "soon"], {2}, None),
    ("history, zero -n", ["history", "-n", "0"], {2}, None),
    ("resume", ["resume"], {0}, None),
    ("safe-state", ["safe-state"], {0}, None),
    ("models, no provider", ["models"], {1}, None),
    ("models use, no agent", ["models", "use", "other"], {1}, None),
    ("completion", ["completion", "bash"], {0}, None),
    ("completion, unknown shell", ["completion", "fish"], {2}, None),
    # the command line itself
    ("version", ["--version"], {0}, None),
    ("no command", [], {2}, None),
    ("unknown command", ["frobnicate"], {2}, None),
    ("run", ["run"], {2}, None),
    # commands of other parts of the CLI, held to the same contract
    ("status, no agent", ["status"], {3}, None),
    ("pins", ["pins"], {0}, None),
    ("gpio read, unknown pin", ["gpio", "read", "GPIO99"], {1}, None),
    ("gpio pwm, duty out of range", ["gpio", "pwm", "led", "2"], {2}, None),
    ("gpio servo, not a servo pin", ["gpio", "servo", "led", "90"], {1}, None),
    ("gpio servo, angle out of range", ["gpio", "servo", "led", "190"], {2}, None),
    ("channel pair, not configured", ["channel", "pair", "telegram"], {1, 2}, None),
    ("sensors", ["sensors"], {0}, None),
    ("sensors history, unknown sensor", ["sensors", "history", "nosuch"], {2}, None),
    ("sensors history, bad --since", ["sensors", "history", "x", "--since", "soon"], {2}, None),
    ("sensors history, damaged file", ["sensors", "history", "x"], {1}, a_damaged_sensor_history),
    ("sensors history, no sensor", ["sensors", "history"], {2}, None),
    ("sensors chart, no --output", ["sensors", "chart", "x"], {2}, None),
    ("sensors chart, unknown sensor", ["sensors", "chart", "nosuch", "--output", "{tmp}/c.png"],
     {2}, None),
    ("camera", ["camera"], {0}, None),
    ("camera snapshot, no --output", ["camera", "snapshot", "door"], {2}, None),
    ("camera snapshot, no camera", ["camera", "snapshot", "--output", "{tmp}/c.jpg"], {2}, None),
    ("camera snapshot, unknown camera", ["camera", "snapshot", "door", "--output",
                                         "{tmp}/c.jpg"], {2}, None),
    ("rules", ["rules"], {0}, None),
    ("interlocks", ["interlocks"], {0}, None),
    ("schedules", ["schedules"], {0}, None),
    ("schedules add, bad cron", ["schedules", "add", "x", "--cron", "bad cron", "gpio", "write",
                                 "led", "on"], {2}, None),
    ("schedules add, unknown zone", ["schedules", "add", "x", "--every", "10m", "--timezone",
                                     "Mars/Base", "notify", "hi"], {2}, None),
    ("schedules add, unknown pin", ["schedules", "add", "x", "--every", "10m", "gpio", "write",
                                    "nosuch", "on"], {2}, None),
    ("memory store", ["memory", "store", "city", "Berlin"], {0}, None),
    ("memory list", ["memory", "list"], {0}, None),
    ("memory stats", ["memory", "stats"], {0}, None),
    ("memory search", ["memory", "search", "hello"], {0}, None),
    ("memory forget, nothing there", ["memory", "forget", "nosuch"], {1}, None),
    ("memory search, zero --limit", ["memory", "search", "hello", "--limit", "0"], {2}, None),
    # the fleet (no [mqtt] here: bad usage, saying what to set)
    ("fleet, no mqtt", ["fleet"], {2}, None),
    ("--node, no mqtt", ["--node", "shed", "pins"], {2}, None),
    ("--node with --hold", ["--node", "shed", "gpio", "write", "led", "on", "--hold", "1"], {2},
     None),
    ("--node on a local-only command", ["--node", "shed", "rules"], {2}, None),
]


@pytest.mark.parametrize(("argv", "codes", "setup"), [case[1:] for case in CASES],
                         ids=[case[0] for case in CASES])
def test_json_output_is_one_object_that_agrees_with_the_exit_code(
        isolated_env, tmp_path, argv, codes, setup):
    if setup is not None:
        setup(tmp_path)
    args = [word.replace("{tmp}", str(tmp_path)) for word in argv]
    out = cli(*args, "--json", env=isolated_env)
    try:
        payload = json.loads(out.stdout)  # one JSON value and nothing else on stdout
    except json.JSONDecodeError:
        pytest.fail(f"stdout is not one JSON object (exit {out.returncode}):\n"
                    f"{out.stdout[:2000]}\nstderr:\n{out.stderr[-2000:]}")
    assert isinstance(payload, dict), payload
    assert {"ok", "exit_code"} <= payload.keys(), payload
    assert payload["exit_code"] == out.returncode, (payload, out.stderr[-2000:])
    assert payload["ok"] is (out.returncode == 0), payload
    if payload["ok"]:
        assert payload.get("error") is None, payload
    else:
        assert isinstance(payload["error"], str) and payload["error"], payload
    assert out.returncode in codes, (payload, out.stderr[-2000:])


WITH_AGENT: list[tuple[list[str], set[int]]] = [
    (["status"], {0}),
    (["pins"], {0}),
    (["gpio", "write", "led", "on"], {0}),
    (["gpio", "write", "GPIO22", "on"], {1}),
    (["boards", "list"], {0}),
    (["models"], {1}),
    (["models", "use", "other"], {1}),
    (["mqtt", "status"], {1}),
    (["resume"], {0}),
    (["safe-state"], {0}),
    (["history"], {0}),
    (["config", "check"], {0}),
    (["sensors"], {0}),
    (["sensors", "history", "nosuch"], {2}),
    (["sensors", "chart", "nosuch", "--output", "nosuch.png"], {2}),
    (["camera", "snapshot", "nosuch", "--output", "nosuch.jpg"], {2}),
    (["rules"], {0}),
    (["schedules"], {0}),
    (["interlocks"], {0}),
]


def test_through_a_running_agent_the_json_agrees_with_the_exit_code_too(isolated_env):
    """The same contract when the answers come from an agent over its control socket."""
    agent = start_agent(isolated_env)
    try:
        broken = []
        for argv, codes in WITH_AGENT:
            out = cli(*argv, "--json", env=isolated_env)
            try:
                payload = json.loads(out.stdout)
            except json.JSONDecodeError:
                broken.append((argv, out.returncode, out.stdout[:300]))
                continue
            agrees = (isinstance(payload, dict) and payload.get("exit_code") == out.returncode
                      and payload.get("ok") is (out.returncode == 0)
                      and (payload.get("error") is None) is payload["ok"]
                      and out.returncode in codes)
            if argv[0] in ("status", "pins", "gpio", "boards", "mqtt", "resume"):
                agrees = agrees and payload.get("via") == "daemon"
            if not agrees:
                broken.append((argv, out.returncode, payload))
        assert broken == []
    finally:
        agent.send_signal(signal.SIGTERM)
        agent.wait(timeout=30)
