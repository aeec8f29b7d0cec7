"""What a pin's value means, the same in every view, on an emulated Uno: an analog pin reads as
its value (with the unit of the sensor that scales it), a servo as the angle it was turned to,
a PWM pin as its duty; in ``gpio read`` (directly and through the agent), ``pins``, ``/gpio``,
``/pins`` and the tools the model reads."""

from __future__ import annotations

import asyncio
import json
import re

import pytest

from edge.agent.commands import CommandContext, run_command
from edge.config.loader import load_config
from edge.hardware import build_hardware
from edge.tools.gpio import hardware_tools
from tests.helpers import asker, cli, start_agent, wait_for

pytestmark = pytest.mark.emulator

UNO = """
[boards.gpio]
pins = {{}}
aliases = {{}}
[boards.uno]
type = "arduino"
port = "{port}"
aliases = {{ knob = "A0", light = "A1", arm = "D10" }}
[boards.uno.pins]
knob = {{ mode = "analog" }}
light = {{ mode = "analog" }}
arm = {{ mode = "pwm" }}
[sensors.lm35]
type = "analog"
pin = "uno:A1"
scale = 500
quantity = "temperature"
unit = "°C"
interval_seconds = 60
"""

KNOB = re.compile(r"uno:A0 \(knob\) reads (0\.49\d*)")
"""2.5 V on a 5 V reference: 511 of 1023."""
LIGHT = re.compile(r"uno:A1 \(light\) reads 0\.04\d* \(lm35: temperature (2[012](\.\d+)?) °C\)")
"""215 mV: 44 of 1023, 21.5 °C at 10 mV per °C (one ADC step is 0.49 °C)."""


async def no_status(full: bool = True) -> str:
    return ""


async def test_analog_pins_and_a_servo_read_as_values_in_every_in_process_view(
        simavr_uno, write_config, isolated_env):
    simavr_uno.set_adc("A0", 2500)
    simavr_uno.set_adc("A1", 215)
    config = load_config(str(write_config(UNO.format(port=simavr_uno.link))), env=isolated_env)
    hardware = build_hardware(config.config, resident=True)
    await hardware.start()
    tools = {tool.name: tool for tool in hardware_tools(hardware)}
    chat = CommandContext(tools=tools, status_text=no_status, requester=asker("telegram:42"))
    try:
        async def read(pin):
            result = await tools["gpio_read"].execute({"pin": pin}, asker("model:me"))
            return result if result.success and result.data["value"] else None

        knob = await _first(read, "knob")
        assert KNOB.fullmatch(knob.output), knob.output  # the model reads the level, not "is on"
        assert knob.data["value"] == pytest.approx(511 / 1023, abs=0.002)
        assert knob.data["kind"] == "fraction" and "reading" not in knob.data
        light = await _first(read, "light")
        assert LIGHT.fullmatch(light.output), light.output
        assert light.data["reading"] == {"sensor": "lm35", "quantity": "temperature",
                                         "value": pytest.approx(21.5, abs=0.6), "unit": "°C"}
        assert KNOB.fullmatch(await run_command("/gpio knob", chat))

        moved = await run_command("/servo arm 90", chat)
        assert moved == "uno:D10 (arm) servo at 90 degrees"
        assert await run_command("/gpio arm", chat) == "uno:D10 (arm) is at 90 degrees"
        arm = await tools["gpio_read"].execute({"pin": "arm"}, asker("model:me"))
        assert arm.data["value"] == 90 and arm.data["angle"] == 90 and arm.data["kind"] == "angle"
        (uno,) = [b for b in hardware.status() if b.name == "uno"]
        assert {p.name: p.value for p in uno.pins}["D10"] == 90

        pins = await run_command("/pins", chat)
        assert "  uno:D10 (arm) pwm = 90 degrees" in pins.splitlines(), pins
        assert any(KNOB.fullmatch(line.strip().replace(" analog = ", " reads "))
                   for line in pins.splitlines()), pins
        assert any(LIGHT.fullmatch(line.strip().replace(" analog = ", " reads "))
                   for line in pins.splitlines()), pins

        # anything else on the pin ends the angle: a PWM duty reads as its duty
        assert (await tools["gpio_pwm"].execute({"pin": "arm", "duty": 0.5}, asker("t"))).success
        after = await tools["gpio_read"].execute({"pin": "arm"}, asker("model:me"))
        assert after.output == "uno:D10 (arm) is at PWM duty 0.50" and "angle" not in after.data
    finally:
        await hardware.shutdown()


async def _first(read, pin):
    """The first read of ``pin`` that has a value (Firmata reports analog pins by itself)."""
    for _ in range(500):
        if found := await read(pin):
            return found
        await asyncio.sleep(0.01)
    raise AssertionError(f"{pin} never reported a value")


def test_an_analog_pin_reads_as_its_value_directly_and_through_the_agent(simavr_uno, write_config,
                                                                         isolated_env):
    simavr_uno.set_adc("A0", 2500)
    simavr_uno.set_adc("A1", 215)
    env = dict(isolated_env, EDGE_CONFIG=str(write_config(UNO.format(port=simavr_uno.link))))
    direct = wait_for(lambda: (out := cli("gpio", "read", "knob", env=env)).returncode == 0 and
                      KNOB.fullmatch(out.stdout.strip()) and out)
    assert "acted on the board directly" in direct.stderr
    direct_pins = cli("pins", env=env)  # without an agent, analog pins are read too
    assert "uno:A1 (light) analog = 0.04" in direct_pins.stdout and "°C" in direct_pins.stdout
    agent = start_agent(env)
    try:
        def via_agent(*args):
            out = cli(*args, env=env)
            return out if out.returncode == 0 else None

        knob = wait_for(lambda: (out := via_agent("gpio", "read", "knob")) and
                        KNOB.fullmatch(out.stdout.strip()) and out)
        assert "directly" not in knob.stderr
        light = wait_for(lambda: (out := via_agent("gpio", "read", "light")) and
                         LIGHT.fullmatch(out.stdout.strip()) and out)
        assert light.stdout.endswith("°C)\n")
        pins = via_agent("pins")
        assert re.search(r"^  uno:A0 \(knob\) analog = 0\.49\d*$", pins.stdout, re.M), pins.stdout
        data = json.loads(via_agent("gpio", "read", "light", "--json").stdout)
        assert data["via"] == "daemon" and data["data"]["value"] == pytest.approx(44 / 1023, abs=0.002)
        assert data["data"]["kind"] == "fraction" and data["data"]["reading"]["unit"] == "°C"
    finally:
        agent.terminate()
        agent.wait(timeout=20)
