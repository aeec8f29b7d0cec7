"""Automation inside the running agent (a real Runtime on mock pins, in the test's loop): a cron
job switches a pin at the right minute on a manual clock, a button press reaches a Telegram admin
through the loopback Bot API, a rule the policy forbids stops the agent before it starts, and
`edge-cli config check` names it."""

from __future__ import annotations

import asyncio
import re
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from edge.automation.clock import ManualClock
from edge.core.exc import ConfigError
from edge.status import format_status
from tests.fakes.telegram_server import telegram_config, texts_to
from tests.helpers import asker, cli, until

PUMP = """
[boards.gpio.aliases]
led = "GPIO17"
button = "GPIO27"
pump = "GPIO22"
[boards.gpio.pins]
led = { mode = "output", safe = "off" }
button = { mode = "input" }
pump = { mode = "output", safe = "off", max_on_seconds = 60 }
"""
WATERING = """
[[schedules]]
name = "water"
cron = "0 6 * * *"
timezone = "Europe/Berlin"
action = "gpio write pump on for 0.3s"
"""


async def test_a_cron_job_switches_the_pump_at_six_berlin_time(start_agent, mock_factory):
    clock = ManualClock(datetime(2026, 11, 24, 5, 58, 30, tzinfo=ZoneInfo("Europe/Berlin")))
    agent = await start_agent(PUMP + WATERING, clock=clock)
    pump = mock_factory.pin(22)
    await clock.advance(timedelta(seconds=89))  # 05:59:59
    assert pump.state == 0
    await clock.advance(timedelta(seconds=1))  # 06:00:00
    await until(lambda: pump.state == 1)
    await until(lambda: any(t.get_name() == "hold-gpio:GPIO22" for t in asyncio.all_tasks()))
    await clock.settle()  # the hold is asleep on the clock
    await clock.advance(timedelta(seconds=0.2))
    assert pump.state == 1  # the hold runs on the agent's clock
    await clock.advance(timedelta(seconds=0.1))
    await until(lambda: pump.state == 0)  # 'for 0.3s' ends the run
    status = await agent.runtime.status()
    row = next(r for r in status["schedules"] if r["name"] == "water")
    assert row["last_run"].startswith("2026-11-24T05:00:00") and row["last_result"]
    assert row["next_run"].startswith("2026-11-25T05:00:00")
    assert "schedules: 1, next water at 2026-11-25 06:00 CET" in format_status(status)  # its zone



async def test_a_button_press_notifies_the_telegram_admin(telegram, start_agent, mock_factory):
    rule = """
[[rules]]
name = "doorbell"
when = "button pressed"
then = "notify Someone is at the door ({event})"
"""
    agent = await start_agent(telegram_config(telegram, extra='admins = ["42"]') + PUMP + rule)
    mock_factory.pin(27).drive_low()  # pull-up: pressed pulls the line low
    texts = await until(lambda: texts_to(telegram, 42), timeout=10)
    assert texts == ["Someone is at the door (button pressed)"]
    assert texts_to(telegram, 43) == []  # allowed, but not an admin
    await agent.stop()


async def test_a_rule_the_policy_forbids_never_starts(start_agent):
    forbidden = '[[rules]]\nname = "boom"\nwhen = "button pressed"\nthen = "gpio write GPIO5 on"\n'
    with pytest.raises(ConfigError, match=r"rules\.0\.then: rule 'boom': .*GPIO5 is not in the allowlist"):
        await start_agent(PUMP + forbidden)


@pytest.mark.parametrize("extra, error", [
    ('[[schedules]]\nname = "x"\ncron = "61 * * * *"\naction = "gpio write led on"\n',
     "invalid cron expression"),
    ('[[schedules]]\nname = "y"\nevery = "1h"\naction = "gpio write GPIO5 on"\n',
     r"schedules\.0\.action: schedule 'y': .*GPIO5 is not in the allowlist"),
    ('[[rules]]\nname = "z"\nwhen = "cellar.temperature > 5"\nthen = "gpio write led on"\n',
     r"rules\.0\.when: rule 'z': .*no sensor 'cellar'"),
])
def test_config_check_names_the_job_and_why(write_config, isolated_env, extra, error):
    path = write_config(PUMP + extra)
    out = cli("config", "check", "--config", str(path), env=isolated_env)
    assert out.returncode == 2, out.stderr
    assert re.search(error, out.stderr), out.stderr


def uno_only(port) -> str:
    """An emulated Uno as the only board; its pins follow."""
    return f"""
[boards.gpio]
pins = {{}}
aliases = {{}}
[boards.uno]
type = "arduino"
port = "{port}"
"""


@pytest.mark.emulator
async def test_a_rule_on_an_emulated_arduino_switches_its_led(start_agent, simavr_uno):
    uno = uno_only(simavr_uno.link) + """aliases = { led = "D13", button = "D2" }
[boards.uno.pins]
led = { mode = "output", safe = "off" }
button = { mode = "input", pull = "none", active = "high" }
[[rules]]
name = "mirror"
when = "button on"
cooldown_seconds = 0
then = "gpio write led on for 0.5s"
"""
    await start_agent(uno)
    seen = len(simavr_uno.levels("D13"))
    simavr_uno.drive("D2", 1)
    await until(lambda: simavr_uno.levels("D13")[seen:][:1] == [1], timeout=10)
    await until(lambda: simavr_uno.levels("D13")[seen:][:2] == [1, 0], timeout=10)  # the hold ends


@pytest.mark.emulator
async def test_an_analog_pin_reads_as_a_scaled_sensor(start_agent, simavr_uno):
    uno = uno_only(simavr_uno.link) + """[boards.uno.pins]
A0 = { mode = "analog" }
[sensors.lm35]
type = "analog"
pin = "uno:A0"
scale = 500                 # 10 mV per °C on a 5 V reference
quantity = "temperature"
unit = "°C"
interval_seconds = 0.2
"""
    agent = await start_agent(uno)
    simavr_uno.set_adc("A0", 215)  # 21.5 °C
    hub = agent.runtime.automation.sensors

    def reading():
        value = hub.latest().get("lm35", {}).get("temperature")
        # one step of the Uno's 10-bit ADC is 4.9 mV: 0.49 °C at this scale
        return value if value is not None and abs(value.value - 21.5) <= 0.6 else None

    found = await until(reading, timeout=10)
    assert found.unit == "°C"
    result = await agent.runtime.tools["sensor_read"].execute({"name": "lm35", "fresh": True},
                                                              asker("cli:me"))
    assert result.success and "lm35 (analog pin uno:A0): temperature 21" in result.output, result.text


@pytest.mark.emulator
async def test_a_cron_job_switches_an_emulated_arduino_pin_at_its_minute(start_agent, simavr_uno):
    uno = uno_only(simavr_uno.link) + """aliases = { valve = "D13" }
[boards.uno.pins]
valve = { mode = "output", safe = "off" }
[[schedules]]
name = "mist"
cron = "30 7 * * 1-5"
timezone = "UTC"
action = "gpio write valve on for 0.3s"
"""
    clock = ManualClock(datetime(2026, 11, 24, 7, 29, 50, tzinfo=ZoneInfo("UTC")))  # a Tuesday
    await start_agent(uno, clock=clock)
    seen = len(simavr_uno.levels("D13"))
    await clock.advance(timedelta(seconds=9))
    await asyncio.sleep(0.2)
    assert simavr_uno.levels("D13")[seen:] == []  # 07:29:59: not yet
    await clock.advance(timedelta(seconds=1))
    await until(lambda: simavr_uno.levels("D13")[seen:][:1] == [1], timeout=10)

    async def held_long_enough() -> bool:  # the hold follows the agent's clock: move it on
        await clock.advance(timedelta(seconds=0.1))
        return simavr_uno.levels("D13")[seen:][:2] == [1, 0]

    for _ in range(100):
        if await held_long_enough():
            break
        await asyncio.sleep(0.05)
    assert simavr_uno.levels("D13")[seen:][:2] == [1, 0]
    assert clock.now() < datetime(2026, 11, 24, 7, 30, 10, tzinfo=ZoneInfo("UTC"))


async def test_a_schedules_time_is_the_minute_it_was_due(telegram, start_agent, mock_factory):
    """``{time}`` is the job's own minute in its zone (06:00, not the clock as it fires, which
    may read 05:59, nor the machine's zone)."""
    jobs = """
[[schedules]]
name = "morning"
cron = "0 6 * * *"
timezone = "Europe/Berlin"
action = "notify Watering at {time} ({schedule})"
"""
    clock = ManualClock(datetime(2026, 11, 24, 5, 59, 59, tzinfo=ZoneInfo("Europe/Berlin")))
    await start_agent(telegram_config(telegram, extra='admins = ["42"]') + PUMP + jobs,
                      clock=clock)
    await clock.advance(timedelta(seconds=1))
    texts = await until(lambda: texts_to(telegram, 42), timeout=10)
    assert texts == ["Watering at 2026-11-24 06:00 (morning)"]


async def test_a_press_while_the_agent_starts_fires_its_rule_once_the_rules_run(
        start_agent, mock_factory, monkeypatch):
    """The boards are up (and report edges) before the channels, memory and the model are:
    an edge in that window is queued for the rules, not lost (seen on the arm64 kernel guest)."""
    from edge.runtime import Runtime

    starting = Runtime.start_memory

    async def press_then_start_memory(self: Runtime) -> None:
        mock_factory.pin(27).drive_low()
        await starting(self)

    monkeypatch.setattr(Runtime, "start_memory", press_then_start_memory)
    rule = '[[rules]]\nname = "light"\nwhen = "button pressed"\nthen = "gpio write led on"\n'
    agent = await start_agent(PUMP + rule)
    await until(lambda: mock_factory.pin(17).state == 1, timeout=10)
    status = await agent.runtime.status()
    assert next(r for r in status["rules"] if r["name"] == "light")["fired"] == 1
    await agent.stop()
