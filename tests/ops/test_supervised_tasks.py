"""Every long-lived task of a running agent is supervised. The agent here has a schedule, a rule,
a sensor, the MQTT bridge (a real Mosquitto), a Telegram channel (the loopback Bot API) and
memory upkeep; each task in turn is made to fail by a bug injected into it, and each time: the
traceback is in the log, status shows the task down with its error, the heartbeat's probe
reports it, and the task comes back and does its work again (the schedule fires, the rule acts,
the sensor is read, the bridge reconnects, the channel answers, upkeep runs)."""

from __future__ import annotations

import asyncio
import json
from datetime import datetime, timedelta
from functools import partial
from zoneinfo import ZoneInfo

import pytest

import edge.memory
from edge.automation.clock import ManualClock
from edge.channels.telegram import TelegramChannel
from edge.memory import hygiene
from edge.status import format_status
from tests.fakes.mosquitto import Mosquitto, Watcher
from tests.fakes.telegram_server import telegram_config, texts_to
from tests.helpers import cli, until

BACKOFF = 0.3
"""Seconds before a failed task's first restart, in these tests (long enough to look at it)."""
BASE = "edge-agent/sup"
AGENT = """
[boards.gpio.aliases]
led = "GPIO17"
button = "GPIO27"
pump = "GPIO22"
[boards.gpio.pins]
led = {{ mode = "output", safe = "off" }}
button = {{ mode = "input" }}
pump = {{ mode = "output", safe = "off", max_on_seconds = 60 }}

[[schedules]]
name = "water"
cron = "0 6 * * *"
timezone = "Europe/Berlin"
action = "gpio write pump on for 0.3s"

[[rules]]
name = "lamp"
when = "button pressed"
then = "gpio write led on"

[sensors.pi]
type = "pi"
interval_seconds = 0.1

[mqtt]
url = "{url}"
node_id = "sup"

[memory]
hygiene_interval_hours = 0.0001

[heartbeat]
interval_seconds = 1
down_after_seconds = 0
"""
EVERY_TASK = {"board-supervisor", "mqtt-bridge", "dispatcher", "memory-hygiene", "rules",
              "scheduler", "heartbeat", "sensor-pi", "mqtt-health", "mqtt-sensors",
              "readings-writer", "readings-upkeep"}


class HeldRestarts:
    """Stands in for :mod:`asyncio` in :mod:`edge.core.supervision`: a failed task's restart
    (its backoff sleep, the module's only sleep) waits until the test has seen it down and
    calls :meth:`release`, so no load can make the down state come and go between two looks."""

    def __init__(self) -> None:
        self._released: asyncio.Event | None = None

    def __getattr__(self, name: str):
        return getattr(asyncio, name)

    @property
    def released(self) -> asyncio.Event:
        if self._released is None:
            self._released = asyncio.Event()
        return self._released

    async def sleep(self, delay: float, result=None):
        await self.released.wait()
        return await asyncio.sleep(delay, result)

    def release(self) -> None:
        self.released.set()


def fails_once(original, error: Exception):
    """``original``, but the first call raises ``error``; ``.calls`` counts the calls."""
    def replacement(*args, **kwargs):
        replacement.calls += 1
        if replacement.calls == 1:
            raise error
        return original(*args, **kwargs)

    replacement.calls = 0
    return replacement


@pytest.fixture
def broker(tmp_path):
    with Mosquitto(tmp_path / "broker") as running:
        yield running



@pytest.fixture
def clock():
    return ManualClock(datetime(2026, 11, 24, 5, 58, 30, tzinfo=ZoneInfo("Europe/Berlin")))


@pytest.fixture
async def agent(telegram, broker, clock, start_agent, monkeypatch):  # stopped before the servers
    monkeypatch.setattr("edge.core.supervision.BACKOFF_START_SECONDS", BACKOFF)
    restarts = HeldRestarts()
    monkeypatch.setattr("edge.core.supervision.asyncio", restarts)
    monkeypatch.setattr(TelegramChannel, "reconnect_backoff", (BACKOFF, 5.0))
    # upkeep a moment after start instead of a minute (and every 0.36 s, from the config)
    monkeypatch.setattr(edge.memory, "hygiene_loop", partial(hygiene.hygiene_loop, first_delay=0.05))
    running = await start_agent(telegram_config(telegram, extra='admins = ["42"]')
                                + AGENT.format(url=broker.url), clock=clock)
    await until(lambda: running.runtime.mqtt.connected)
    running.restarts = restarts
    yield running
    await running.stop()


async def status_when(agent, predicate, timeout: float = 10.0) -> dict:
    """The agent's status (what ``edge-cli status --json`` prints) once ``predicate`` holds."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        status = await agent.runtime.status()
        if predicate(status):
            return status
        assert asyncio.get_running_loop().time() < deadline, f"not in time; status: {status}"
        await asyncio.sleep(0.02)


def task_row(status: dict, name: str) -> dict:
    return next(row for row in status["tasks"] if row["name"] == name)


def is_down(name: str):
    return lambda status: not task_row(status, name)["healthy"]


def is_up(name: str):
    return lambda status: task_row(status, name)["healthy"]


async def shown_down_then_back(agent, name: str, error: str, caplog) -> None:
    """``name`` failed with ``error``: the traceback is logged, status (JSON and text) shows it
    down with the error, the heartbeat's probe reports it; then it runs again."""
    status = await status_when(agent, is_down(name))
    row = task_row(status, name)
    assert row["down_since"] and error in row["last_error"], row
    assert f"task {name}: DOWN since {row['down_since']}" in format_status(status)
    assert error in agent.runtime._down_components()[f"task {name}"]
    failed = [r for r in caplog.records if r.getMessage().startswith(f"task_failed task={name} ")]
    assert failed and failed[0].exc_info, caplog.text
    assert "Traceback (most recent call last)" in caplog.text and error in caplog.text
    agent.restarts.release()
    status = await status_when(agent, is_up(name))
    assert task_row(status, name)["restarts"] == 1
    assert f"task {name}" not in agent.runtime._down_components()
    assert "task " not in format_status(status)


async def test_every_long_lived_task_is_listed_in_status_and_runs(agent, isolated_env):
    status = await status_when(agent, lambda s: {r["name"] for r in s.get("tasks", [])} == EVERY_TASK)
    assert all(row["healthy"] and row["restarts"] == 0 for row in status["tasks"]), status["tasks"]
    out = await asyncio.to_thread(cli, "status", "--json", env=isolated_env)
    assert out.returncode == 0, out.stderr
    assert {row["name"] for row in json.loads(out.stdout)["data"]["tasks"]} == EVERY_TASK
    text = await asyncio.to_thread(cli, "status", env=isolated_env)
    assert "task " not in text.stdout  # nothing down: the text is as it always was


async def test_the_scheduler_comes_back_and_its_job_still_fires(agent, clock, telegram, mock_factory,
                                                                isolated_env, caplog):
    scheduler = agent.runtime.automation.scheduler
    tick, broken = scheduler._tick, [True]

    def buggy_tick(now):
        if broken[0]:
            raise RuntimeError("scheduler bug")
        tick(now)

    scheduler._tick = buggy_tick
    scheduler.wake()
    await status_when(agent, is_down("scheduler"))
    # down in edge-cli status, text and JSON, and told to the admin by the heartbeat
    out = await asyncio.to_thread(cli, "status", "--json", env=isolated_env)
    row = task_row(json.loads(out.stdout)["data"], "scheduler")
    assert not row["healthy"] and "RuntimeError: scheduler bug" in row["last_error"]
    out = await asyncio.to_thread(cli, "status", env=isolated_env)
    assert "task scheduler: DOWN since" in out.stdout and "scheduler bug" in out.stdout
    await until(lambda: any("task scheduler is down" in t for t in texts_to(telegram, 42)))
    assert "Traceback (most recent call last)" in caplog.text
    broken[0] = False
    agent.restarts.release()
    await status_when(agent, is_up("scheduler"))
    await until(lambda: any("task scheduler is back" in t for t in texts_to(telegram, 42)))
    pump = mock_factory.pin(22)
    await clock.advance(timedelta(seconds=90))  # 06:00 in Berlin
    await until(lambda: pump.state == 1)


async def test_the_rules_come_back_and_act_on_the_next_press(agent, mock_factory, caplog):
    rules = agent.runtime.automation.rules
    rules.on_event = fails_once(rules.on_event, RuntimeError("rule engine bug"))
    button, led = mock_factory.pin(27), mock_factory.pin(17)
    button.drive_low()  # pressed (pull-up): the rules fail on this event
    await shown_down_then_back(agent, "rules", "rule engine bug", caplog)
    assert led.state == 0
    button.drive_high()
    button.drive_low()
    await until(lambda: led.state == 1)


async def test_a_sensors_polling_comes_back_and_reads_again(agent, caplog):
    hub = agent.runtime.automation.sensors
    hub.measure = fails_once(hub.measure, RuntimeError("driver bug"))
    await shown_down_then_back(agent, "sensor-pi", "driver bug", caplog)
    read_at = hub.sensors["pi"].read_at or 0.0
    await until(lambda: (hub.sensors["pi"].read_at or 0.0) > read_at)


async def test_the_mqtt_bridge_comes_back_and_reconnects(agent, broker, caplog):
    bridge = agent.runtime.mqtt
    async with Watcher(broker, f"{BASE}/availability") as seen:
        await seen.wait(f"{BASE}/availability", "online")
        onlines = len(seen.payloads(f"{BASE}/availability"))
        # a bug in a command's handling, and another in handling that: it escapes the loop
        bridge.on_message = fails_once(bridge.on_message, RuntimeError("command handler bug"))
        bridge.connection._lost = fails_once(bridge.connection._lost, RuntimeError("bridge bug"))
        await seen.publish(f"{BASE}/led/set", "ON")
        await shown_down_then_back(agent, "mqtt-bridge", "bridge bug", caplog)
        await until(lambda: bridge.connected and bridge.connection.connects >= 2)
        await seen.wait(f"{BASE}/availability", "online", after=onlines)


async def test_a_channel_listener_comes_back_and_answers(agent, telegram, caplog):
    channel = agent.runtime.channels["telegram"]
    await until(lambda: channel.last_poll)  # polling: up
    channel._offset_durable = fails_once(channel._offset_durable, RuntimeError("poller bug"))
    status = await status_when(agent, lambda s: s["channels"][0]["last_error"])
    (row,) = status["channels"]
    assert not row["healthy"] and row["down_since"] and "poller bug" in row["last_error"]
    assert "poller bug" in agent.runtime._down_components()["channel telegram"]
    failed = [r for r in caplog.records
              if r.getMessage().startswith("task_failed task=listen-telegram ")]
    assert failed and failed[0].exc_info and "Traceback (most recent call last)" in caplog.text
    agent.restarts.release()
    await status_when(agent, lambda s: s["channels"][0]["healthy"])
    telegram.push_message(42, "/gpio led")
    await until(lambda: any("led" in t for t in texts_to(telegram, 42)))


async def test_memory_upkeep_comes_back_and_runs_again(agent, monkeypatch, caplog):
    run_hygiene = fails_once(hygiene.run_hygiene, RuntimeError("upkeep bug"))
    monkeypatch.setattr(hygiene, "run_hygiene", run_hygiene)
    await shown_down_then_back(agent, "memory-hygiene", "upkeep bug", caplog)
    await until(lambda: run_hygiene.calls >= 2, timeout=5)


async def test_the_heartbeat_comes_back_and_looks_again(agent, caplog):
    beat = agent.runtime.automation.heartbeat
    beat.observe = fails_once(beat.observe, RuntimeError("heartbeat bug"))
    await shown_down_then_back(agent, "heartbeat", "heartbeat bug", caplog)
    await until(lambda: beat.observe.calls >= 2, timeout=5)
