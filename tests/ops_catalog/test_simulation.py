"""Driving the simulation by hand (``gpio.simulate``, ``sensors.simulate``, ``/sim``) in a real
agent on simulated boards: the interlock, a rule on a simulated Arduino's input and the fan's
hysteresis see the pretend edges and readings as real ones; real hardware refuses (exit 2)."""

from __future__ import annotations

from edge.agent.commands import CommandContext, run_command
from edge.control.ops import run_op
from edge.core.requester import Requester
from tests.helpers import until

PLANT = """
[boards.gpio.aliases]
pump = "GPIO22"
fan = "GPIO23"
tank_low = "GPIO5"
[boards.gpio.pins]
pump = { mode = "output", safe = "off" }
fan = { mode = "output", safe = "off", active_low = true }
tank_low = { mode = "input", pull = "down" }

[boards.uno]
type = "arduino"
port = "/dev/ttyACM0"
simulate = true
aliases = { lamp = "D13", button = "D2", dimmer = "D9", light = "A0" }
[boards.uno.pins]
lamp = { mode = "output", safe = "off" }
button = { mode = "input" }
dimmer = { mode = "pwm", safe = "off" }
light = { mode = "analog" }

[sensors.greenhouse]
type = "bme280"
simulate = true

[sensors.cpu]
type = "pi"

[[interlocks]]
name = "dry-run"
forbid = "pump on"
while = "tank_low on"

[[rules]]
name = "fan"
when = "greenhouse.temperature > 28"
hysteresis = 1.5
then = "gpio write fan on"
on_clear = "gpio write fan off"

[[rules]]
name = "lamp"
when = "button pressed"
cooldown_seconds = 0
then = "gpio write lamp on"
"""
OPERATOR = Requester("cli", "me")


async def test_a_simulated_input_holds_the_interlock_and_a_reading_drives_the_fan(start_agent):
    agent = await start_agent(PLANT)
    runtime = agent.runtime
    pressed = await run_op(runtime, "gpio.simulate", {"pin": "tank_low", "value": "on"}, OPERATOR,
                           operator=True)
    assert pressed.ok, pressed.message
    refused = await run_op(runtime, "gpio.write", {"pin": "pump", "value": "on"}, OPERATOR,
                           operator=True)
    assert not refused.ok and "refused by interlock dry-run" in refused.message
    await run_op(runtime, "gpio.simulate", {"pin": "tank_low", "value": "off"}, OPERATOR,
                 operator=True)
    assert (await run_op(runtime, "gpio.write", {"pin": "pump", "value": "on"}, OPERATOR,
                         operator=True)).ok

    fan = runtime.hardware.boards["gpio"]
    held = await run_op(runtime, "sensors.simulate",
                        {"name": "greenhouse", "quantity": "temperature", "value": 30}, OPERATOR,
                        operator=True)
    assert held.ok and "30 °C" in held.message
    await until(lambda: fan.status().pins and any(
        p.name == "GPIO23" and p.value == 0 for p in fan.status().pins))  # active low: on
    for value, line in ((27.0, 0), (26.0, 1)):  # off only below 26.5
        await run_op(runtime, "sensors.simulate",
                     {"name": "greenhouse", "quantity": "temperature", "value": value}, OPERATOR,
                     operator=True)
        await until(lambda line=line: any(p.name == "GPIO23" and p.value == line
                                          for p in fan.status().pins))


async def test_the_simulated_uno_has_the_unos_pins_and_reports_an_edge(start_agent):
    agent = await start_agent(PLANT)
    uno = agent.runtime.hardware.boards["uno"]
    assert uno.status().simulated and uno.kind == "arduino"
    modes = {p.name: p.modes for p in uno.capabilities()}
    assert "pwm" in modes["D9"] and "pwm" not in modes["D2"] and modes["A0"] == {"analog"}
    result = await run_op(agent.runtime, "gpio.simulate", {"pin": "button", "value": "on"},
                          OPERATOR, operator=True)
    assert result.ok, result.message
    await until(lambda: any(p.name == "D13" and p.value == 1 for p in uno.status().pins))
    servo = await run_op(agent.runtime, "gpio.servo", {"pin": "dimmer", "angle": 90}, OPERATOR,
                         operator=True)
    assert servo.ok, servo.message


async def test_real_hardware_and_outputs_refuse_with_the_reason(start_agent):
    agent = await start_agent(PLANT)
    sensor = await run_op(agent.runtime, "sensors.simulate",
                          {"name": "cpu", "quantity": "cpu_temperature", "value": 90}, OPERATOR,
                          operator=True)
    assert sensor.exit_code == 2 and "reads a real device" in sensor.message
    assert "simulate = true" in sensor.message
    output = await run_op(agent.runtime, "gpio.simulate", {"pin": "pump", "value": "on"},
                          OPERATOR, operator=True)
    assert output.exit_code == 2 and "not an allowlisted input" in output.message


async def test_sim_in_chat_is_for_admins(start_agent):
    agent = await start_agent(PLANT)
    runtime = agent.runtime

    def ctx(sender: str) -> CommandContext:
        async def status_text(full: bool = True) -> str:
            return ""
        return CommandContext(runtime.tools, status_text, Requester("telegram", sender),
                              admins={"telegram": frozenset({"42"})}, target=runtime)

    assert await run_command("/sim tank_low on", ctx("43")) == "Only an admin can use /sim."
    assert "simulated on" in await run_command("/sim tank_low on", ctx("42"))
    reply = await run_command("/sim greenhouse temperature 31.5", ctx("42"))
    assert "31.5 °C" in reply
    assert "released" in await run_command("/sim greenhouse temperature release", ctx("42"))
