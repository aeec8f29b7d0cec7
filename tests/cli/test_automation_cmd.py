"""``edge-cli schedules``, ``sensors``: input that could never work is bad usage, exit 2, with a
clear message (``--json``: ok false, error, exit_code 2), whether an agent runs or not; a job
that can run is added as before."""

from __future__ import annotations

import json
import signal

import pytest

from tests.helpers import cli, start_agent

CONFIG = """
[boards.gpio.pins]
led = { mode = "output", safe = "off", max_on_seconds = 60 }
button = { mode = "input" }
[[schedules]]
name = "nightly"
cron = "0 3 * * *"
action = "gpio write led off"
[sensors.pi]
type = "pi"
"""


@pytest.fixture
def env(isolated_env, write_config):
    return {**isolated_env, "EDGE_CONFIG": str(write_config(CONFIG))}


BAD = [
    (["schedules", "add", "x", "--cron", "61 * * * *", "notify", "hi"],
     "cron: invalid cron expression '61 * * * *'"),
    (["schedules", "add", "x", "--every", "10m", "--timezone", "Mars/Base", "notify", "hi"],
     "schedule 'x': unknown timezone 'Mars/Base'; use an IANA name"),
    (["schedules", "add", "x", "--every", "10m", "gpio", "write", "nosuch", "on"],
     "schedule 'x': 'nosuch' is not a"),
    (["schedules", "add", "x", "--every", "10m", "gpio", "write", "button", "on"],
     "configured as input, which does not allow write"),
    (["schedules", "add", "x", "--every", "10m", "gpio", "write", "led", "on", "for", "500s"],
     "has max_on_seconds = 60"),
    (["schedules", "add", "x", "--every", "10m", "gpio", "servo", "led", "90"],
     "schedule 'x': gpio servo led 90:"),
    (["schedules", "add", "x", "--every", "10m", "sensor", "read", "soil"],
     "no sensor 'soil' (sensors: pi)"),
    (["schedules", "add", "x", "--every", "10m", "water", "the", "plants"],
     "'water the plants' is not an action; an action is one of"),
    (["schedules", "add", "x", "--at", "2001-01-01 06:00", "notify", "hi"],
     "at 2001-01-01 06:00 has already passed; give a later time"),
    (["schedules", "add", "9lives", "--every", "10m", "notify", "hi"],
     "'9lives': use letters, digits"),
    (["schedules", "add", "nightly", "--every", "10m", "notify", "hi"],
     "schedule 'nightly' already exists (it is in the config file)"),
    (["schedules", "remove", "nosuch"], "no schedule named 'nosuch'; known: nightly"),
    (["schedules", "remove", "nightly"], "schedule 'nightly' is in the config file"),
    (["sensors", "soil"], "no sensor 'soil' (sensors: pi)"),
]


@pytest.mark.parametrize("argv, message", BAD, ids=[" ".join(a[:2] + a[-2:]) for a, _ in BAD])
def test_input_that_could_never_work_exits_2(env, argv, message):
    out = cli(*argv, env=env)
    assert out.returncode == 2, (out.stdout, out.stderr)
    assert message in out.stderr, out.stderr
    assert "Traceback" not in out.stderr
    body = json.loads(cli(*argv, "--json", env=env).stdout)
    assert (body["ok"], body["exit_code"]) == (False, 2) and message in body["error"], body


def test_with_an_agent_running_bad_input_exits_2_and_good_input_is_added(env):
    agent = start_agent(env)
    try:
        out = cli("schedules", "add", "x", "--every", "10m", "gpio", "write", "nosuch", "on", env=env)
        assert out.returncode == 2 and "'nosuch' is not a" in out.stderr, out.stderr
        out = cli("schedules", "add", "glow", "--every", "10m", "gpio", "write", "led", "on",
                  "for", "5s", env=env)
        assert out.returncode == 0, out.stderr
        assert "added: glow: every 10m" in out.stdout
        out = cli("schedules", "add", "glow", "--every", "1h", "notify", "hi", env=env)
        assert out.returncode == 2 and "schedule 'glow' already exists" in out.stderr, out.stderr
        assert cli("schedules", "remove", "glow", env=env).returncode == 0
        out = cli("schedules", "remove", "glow", env=env)
        assert out.returncode == 2 and "no schedule named 'glow'" in out.stderr, out.stderr
    finally:
        agent.send_signal(signal.SIGTERM)
        agent.wait(timeout=30)
