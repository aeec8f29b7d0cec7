"""Interlocks at the one door, on gpiozero's mock pins: refusals naming the interlock whoever asks,
trips when the condition comes true while the output is on, exclusive and at_most, and the
unknown (a failing or stale sensor, a board down) counted as true."""

from __future__ import annotations

import contextlib
import logging

import pytest

from edge.automation.actions import parse_action
from edge.automation.assembly import Automation
from edge.automation.interlocks import InterlockRefused
from edge.config.loader import load_config
from edge.core.exc import PolicyDenied
from edge.core.requester import Requester
from edge.hardware import build_hardware
from edge.tools.automation import interlocks_text
from tests.automation.test_assembly import Telegram, thermometer
from tests.helpers import asker, until

BOARD = """
[boards.gpio.aliases]
pump = "GPIO22"
tank_low = "GPIO5"
heater = "GPIO23"
cooler = "GPIO24"
valve1 = "GPIO16"
valve2 = "GPIO20"
valve3 = "GPIO21"
[boards.gpio.pins]
pump = { mode = "output", safe = "off" }
tank_low = { mode = "input", pull = "down" }
heater = { mode = "output", safe = "off" }
cooler = { mode = "output", safe = "off" }
valve1 = { mode = "output", safe = "off" }
valve2 = { mode = "output", safe = "off" }
valve3 = { mode = "output", safe = "off" }
GPIO17 = { mode = "pwm" }
[channels.telegram]
bot_token = "123:abc"
[sensors.tank]
type = "ds18b20"
interval_seconds = 0.05

[[interlocks]]
name = "dry-run"
forbid = "pump on"
while = "tank_low on"

[[interlocks]]
name = "heat-or-cool"
exclusive = ["heater", "cooler"]

[[interlocks]]
name = "psu"
at_most = 2
of = ["valve1", "valve2", "valve3"]

[[interlocks]]
name = "frost"
forbid = "GPIO17 on"
while = "tank.temperature < 4"
"""


@pytest.fixture
def agent(tmp_path, write_config, isolated_env, mock_factory):
    return contextlib.asynccontextmanager(running)(tmp_path, write_config, isolated_env,
                                                   mock_factory)


async def running(tmp_path, write_config, isolated_env, mock_factory):
    """An agent's hardware and automation, started (the door, the interlocks' watch)."""
    thermometer(tmp_path, 21000)
    cfg = load_config(str(write_config(BOARD)), env=isolated_env).config
    hw = build_hardware(cfg, resident=True, pin_factory=mock_factory)
    auto = Automation(cfg, hw, pin_factory=mock_factory, sensor_root=tmp_path)
    telegram = Telegram()
    await hw.start()
    await auto.start({"telegram": telegram}, {"telegram": frozenset({"42"})}, dict)
    await until(lambda: auto.sensors.latest().get("tank"))
    try:
        yield hw, auto, telegram
    finally:
        await auto.aclose()
        await hw.shutdown()


async def test_a_forbidden_state_is_refused_naming_the_interlock(agent, mock_factory):
    async with agent as (hw, _, _):
        await hw.write("pump", True, asker())
        await hw.write("pump", False, asker())
        mock_factory.pin(5).drive_high()
        with pytest.raises(InterlockRefused, match=r"^pump: refused by interlock dry-run \(tank_low "
                                                   r"is on \(switch closed: line high, pulled "
                                                   r"down\)\)$") as refused:
            await hw.write("pump", True, asker("telegram:42"))
        assert isinstance(refused.value, PolicyDenied) and refused.value.exit_code == 1
        assert mock_factory.pin(22).state == 0
        await hw.write("pump", False, asker())  # off (its safe level) is never refused
        await hw.make_safe("pump", asker())


async def test_a_rule_or_schedule_action_is_refused_too(agent, mock_factory):
    async with agent as (hw, auto, _):
        mock_factory.pin(5).drive_high()
        with pytest.raises(InterlockRefused, match="dry-run"):
            await auto.runner.run(parse_action("gpio write pump on"), Requester("schedule", "water"),
                                  {"schedule": "water"})
        assert mock_factory.pin(22).state == 0


async def test_the_tank_running_low_trips_the_pump_and_tells_the_admins_once(agent, mock_factory,
                                                                             caplog):
    async with agent as (hw, auto, telegram):
        caplog.set_level(logging.INFO)
        await hw.write("pump", True, asker())
        assert mock_factory.pin(22).state == 1
        mock_factory.pin(5).drive_high()
        await until(lambda: mock_factory.pin(22).state == 0)
        await until(lambda: telegram.sent)
        assert telegram.sent == [("42", "Interlock dry-run tripped: pump driven to its safe level "
                                        "(tank_low is on (switch closed: line high, pulled down))")]
        assert "interlock_tripped interlock=dry-run board=gpio pin=GPIO22" in caplog.text
        row = next(r for r in auto.status()["interlocks"] if r["name"] == "dry-run")
        assert row["tripped"] == "tank_low is on (switch closed: line high, pulled down)"
        assert row["active"] is True
        mock_factory.pin(5).drive_low()
        await until(lambda: "interlock_cleared interlock=dry-run" in caplog.text)
        await hw.write("pump", True, asker())
        mock_factory.pin(5).drive_high()
        await until(lambda: mock_factory.pin(22).state == 0)
        await until(lambda: len(telegram.sent) == 2)  # a new trip after it cleared is told again


async def test_exclusive_allows_one_of_them_on(agent, mock_factory):
    async with agent as (hw, _, _):
        await hw.write("heater", True, asker())
        with pytest.raises(InterlockRefused, match=r"^cooler: refused by interlock heat-or-cool "
                                                   r"\(heater is on\)$"):
            await hw.write("cooler", True, asker())
        await hw.write("heater", False, asker())
        await hw.write("cooler", True, asker())
        assert mock_factory.pin(24).state == 1


async def test_at_most_counts_the_outputs_on(agent, mock_factory):
    async with agent as (hw, _, _):
        await hw.write("valve1", True, asker())
        await hw.write("valve2", True, asker())
        await hw.write("valve2", True, asker())  # already on: still two
        with pytest.raises(InterlockRefused, match=r"valve3: refused by interlock psu "
                                                   r"\(valve1, valve2 are on\)"):
            await hw.write("valve3", True, asker())
        await hw.write("valve1", False, asker())
        await hw.write("valve3", True, asker())


async def test_a_sensor_threshold_refuses_and_a_failing_sensor_counts_as_true(
        agent, mock_factory, tmp_path):
    async with agent as (hw, auto, _):
        await hw.pwm("GPIO17", 0.5, None, asker())
        thermometer(tmp_path, 3000)
        await until(lambda: mock_factory.pin(17).state == 0)  # tripped by the cold
        with pytest.raises(InterlockRefused, match=r"tank\.temperature is 3 < 4"):
            await hw.pwm("GPIO17", 0.5, None, asker())
        thermometer(tmp_path, 20000)
        await until(lambda: auto.sensors.latest()["tank"]["temperature"].value == 20.0)
        await hw.pwm("GPIO17", 0.5, None, asker())
        thermometer(tmp_path, None)  # the sensor fails: unknown counts as true
        await until(lambda: mock_factory.pin(17).state == 0)
        with pytest.raises(InterlockRefused, match="frost .*tank is failing"):
            await hw.pwm("GPIO17", 0.5, None, asker())


async def test_a_stale_reading_counts_as_true(agent):
    async with agent as (hw, auto, _):
        await auto.sensors.aclose()  # no more readings
        auto.interlocks.clock = lambda: auto.sensors.sensors["tank"].read_at + 0.2  # > 3 × 0.05 s
        with pytest.raises(InterlockRefused, match=r"tank\.temperature is stale"):
            await hw.pwm("GPIO17", 0.5, None, asker())


async def test_a_board_down_counts_as_true(write_config, isolated_env, mock_factory, tmp_path):
    text = BOARD.split("[[interlocks]]")[0] + (
        '[[interlocks]]\nname = "link"\nforbid = "pump on"\nwhile = "board gpio down"\n')
    thermometer(tmp_path, 21000)
    cfg = load_config(str(write_config(text)), env=isolated_env).config
    hw = build_hardware(cfg, resident=True, pin_factory=mock_factory)
    auto = Automation(cfg, hw, pin_factory=mock_factory, sensor_root=tmp_path)
    await hw.start()
    try:
        await hw.write("pump", True, asker())
        hw.boards["gpio"].connected = False  # type: ignore[misc]
        with pytest.raises(InterlockRefused, match=r"link \(board gpio is down\)"):
            auto.interlocks.check(hw.pins[("gpio", "GPIO22")], 1.0)
    finally:
        hw.boards["gpio"].connected = True  # type: ignore[misc]
        await hw.shutdown()


async def test_the_rows_list_each_interlock_with_its_state(agent, mock_factory):
    async with agent as (_, auto, _):
        mock_factory.pin(5).drive_high()
        text = interlocks_text(auto.interlocks.rows())
        assert "dry-run: forbid pump on while tank_low on: holding (tank_low is on (switch " \
               "closed: line high, pulled down))" in text
        assert "heat-or-cool: exclusive heater, cooler: on now none" in text
        assert "psu: at most 2 of valve1, valve2, valve3" in text


def test_status_shows_a_tripped_one():
    from edge.status import format_status

    rows = [{"name": "dry-run", "tripped": "tank_low is on"}, {"name": "psu", "tripped": None}]
    text = format_status({"interlocks": rows})
    assert "interlocks: 2" in text and "interlock dry-run TRIPPED: tank_low is on" in text
    assert "psu TRIPPED" not in text


async def test_a_one_shot_command_counts_what_it_cannot_see_as_on(write_config, isolated_env,
                                                                  mock_factory, tmp_path):
    """Without an agent, ``edge-cli gpio write`` adopts the other outputs of the pin's interlocks
    at the level they have before it checks: one another process holds (here a gpiozero device
    owning the heater's line) is unknown, and counted as on; one nobody holds is read."""
    from gpiozero import DigitalOutputDevice

    thermometer(tmp_path, 21000)
    cfg = load_config(str(write_config(BOARD)), env=isolated_env).config
    other = DigitalOutputDevice(23, pin_factory=mock_factory, initial_value=True)  # the heater
    hw = build_hardware(cfg, resident=False, pin_factory=mock_factory, hold_seconds=1)
    Automation(cfg, hw, pin_factory=mock_factory, sensor_root=tmp_path)
    await hw.start()
    try:
        with pytest.raises(InterlockRefused, match=r"cooler: refused by interlock heat-or-cool "
                                                   r"\(heater is unknown \(counted as on\)\)"):
            await hw.write("cooler", True, asker("cli:me"))
        assert mock_factory.pin(24).state == 0
        other.close()  # the other process let go; the heater's line is low
        await hw.write("cooler", True, asker("cli:me"))
        assert mock_factory.pin(24).state == 1
    finally:
        await hw.shutdown()
