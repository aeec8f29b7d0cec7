"""A short ``every`` job's times are worth the second: ``edge-cli schedules`` (the schedule
tool's listing) and ``edge-cli status`` show its next run to the second, a cron job's to the
minute, from the running agent."""

from __future__ import annotations

import json
import re
import signal

import pytest

from tests.helpers import cli, start_agent

CONFIG = """
[boards.gpio.pins]
led = { mode = "output", safe = "off" }
[[schedules]]
name = "tick"
every = "30s"
timezone = "UTC"
action = "gpio write led off"
[[schedules]]
name = "nightly"
cron = "0 3 * * *"
timezone = "Europe/Berlin"
action = "gpio write led off"
"""
DAY = r"\d{4}-\d\d-\d\d"


@pytest.fixture
def agent_env(isolated_env, write_config):
    env = {**isolated_env, "EDGE_CONFIG": str(write_config(CONFIG))}
    agent = start_agent(env)
    yield env
    agent.send_signal(signal.SIGTERM)
    agent.wait(timeout=30)


def test_an_every_30s_job_lists_its_next_run_to_the_second(agent_env):
    out = cli("schedules", env=agent_env)
    assert out.returncode == 0, out.stderr
    tick, nightly = out.stdout.splitlines()
    assert re.fullmatch(rf"tick: every 30s \(UTC\) -> gpio write led off; next {DAY} \d\d:\d\d:\d\d UTC",
                        tick), tick
    assert re.fullmatch(rf"nightly: cron 0 3 \* \* \* \(Europe/Berlin\) -> gpio write led off; "
                        rf"next {DAY} 03:00 CET", nightly), nightly
    rows = {row["name"]: row for row in json.loads(cli("schedules", "--json", env=agent_env).stdout)
            ["data"]["schedules"]}
    assert (rows["tick"]["to_the_second"], rows["nightly"]["to_the_second"]) == (True, False)

    status = cli("status", env=agent_env)
    assert status.returncode == 0, status.stderr
    line = next(x for x in status.stdout.splitlines() if x.startswith("schedules:"))
    assert re.fullmatch(rf"schedules: 2, next tick at {DAY} \d\d:\d\d:\d\d UTC", line), line
