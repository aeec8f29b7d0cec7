"""Interlocks on the emulated Uno (simavr running the real firmware): the model's tool is refused
with the interlock's words, and the emulated input changing while the output is on trips it to
its safe level through the door."""

from __future__ import annotations

import logging

import pytest

from edge.automation.assembly import Automation
from edge.config.loader import load_config
from edge.hardware import build_hardware
from edge.tools.gpio import hardware_tools
from tests.automation.test_assembly import Telegram
from tests.helpers import asker, until

pytestmark = pytest.mark.emulator

UNO = """
[boards.gpio]
pins = {{}}
aliases = {{}}
[boards.uno]
type = "arduino"
port = "{port}"
watchdog_ms = 800
aliases = {{ pump = "D13", tank_low = "D2" }}
[boards.uno.pins]
pump = {{ mode = "output", safe = "off" }}
tank_low = {{ mode = "input", pull = "none", active = "high" }}
[channels.telegram]
bot_token = "123:abc"
[security]
autonomy = "full"

[[interlocks]]
name = "dry-run"
forbid = "pump on"
while = "tank_low on"
"""


async def test_the_emulated_input_trips_the_pump_and_refuses_the_tool(
        simavr_uno, write_config, isolated_env, caplog):
    caplog.set_level(logging.INFO)
    config = load_config(str(write_config(UNO.format(port=simavr_uno.link))),
                         env=isolated_env).config
    hardware = build_hardware(config, resident=True)
    automation = Automation(config, hardware)
    tools = {tool.name: tool for tool in hardware_tools(hardware)}
    telegram = Telegram()
    await hardware.start()
    await automation.start({"telegram": telegram}, {"telegram": frozenset({"42"})}, dict)
    try:
        result = await tools["gpio_write"].execute({"pin": "pump", "value": "on"},
                                                   asker("telegram:42", via_model=True))
        assert result.success, result.text
        simavr_uno.wait_edge("D13", 1)
        ons = len(simavr_uno.levels("D13"))
        simavr_uno.drive("D2", 1)  # the tank runs low
        await until(lambda: len(simavr_uno.levels("D13")) > ons
                    and simavr_uno.levels("D13")[-1] == 0)  # the loop stays free to trip
        await until(lambda: telegram.sent)
        assert telegram.sent == [("42", "Interlock dry-run tripped: pump driven to its safe "
                                        "level (tank_low is on (line high, no pull))")]
        assert "interlock_tripped interlock=dry-run board=uno pin=D13" in caplog.text
        refused = await tools["gpio_write"].execute({"pin": "pump", "value": "on"},
                                                    asker("telegram:42", via_model=True))
        assert not refused.success
        assert "pump: refused by interlock dry-run (tank_low is on (line high, no pull))" in refused.text
    finally:
        await automation.aclose()
        await hardware.shutdown()
