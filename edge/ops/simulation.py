"""Driving the simulation by hand: ``gpio.simulate`` makes an input of a simulated board active
or not (``edge-cli gpio simulate PIN on|off``), ``sensors.simulate`` holds a simulated sensor's
reading until released (``edge-cli sensors simulate NAME QUANTITY VALUE``, ``--release``); an
admin's ``/sim`` in chat does either. Rules, interlocks, MQTT and the history see them exactly as
real edges and readings, since the board reports the edge and the hub takes the reading. On real
hardware both are refused with the reason (exit 2).

>>> SIM_INPUT.parse(["button", "on"])
{'pin': 'button', 'value': 'on'}
>>> SIM_SENSOR.parse(["greenhouse", "temperature", "30"])
{'name': 'greenhouse', 'quantity': 'temperature', 'value': 30.0}
>>> SIM_SENSOR.parse(["greenhouse", "temperature", "release"])
{'name': 'greenhouse', 'quantity': 'temperature', 'release': True}
"""

from __future__ import annotations

import logging
from typing import Any, Literal

from pydantic import Field, model_validator

from edge.core.exc import EdgeError, UsageError
from edge.core.requester import Requester
from edge.ops.operation import Chat
from edge.ops.result import OpResult, OpTarget
from edge.tools.base import ToolArgs
from peripherals.base import PinMode
from peripherals.exc import BoardError

log = logging.getLogger(__name__)


class SimulateInputArgs(ToolArgs):
    pin: str = Field(description="an input pin of a simulated board: its alias or name")
    value: Literal["on", "off"] = Field(description="on: active (pressed, closed), as every "
                                                    "view says it; off: released")


class SimulateSensorArgs(ToolArgs):
    name: str = Field(description="a simulated sensor ([sensors.NAME] simulate = true)")
    quantity: str = Field(description="one of the quantities its type yields (temperature...)")
    value: float | None = Field(default=None, description="the reading to hold")
    release: bool = Field(default=False, description="let go of the held reading")

    @model_validator(mode="after")
    def _value_or_release(self) -> SimulateSensorArgs:
        if (self.value is None) != self.release:
            raise ValueError("give a value to hold, or release (not both)")
        return self


async def simulate_input(target: OpTarget, args: dict[str, Any], requester: Requester) -> OpResult:
    """``gpio.simulate``: the input's line driven to what ``on`` means on it (its pull and
    ``active``: :func:`edge.hardware.pins.input_active_low`)."""
    hardware = target.hardware
    try:
        board, pin = hardware.locate(args["pin"])
        rule = hardware.pins.get((board, pin))
        if rule is None or rule.mode is not PinMode.INPUT:
            raise UsageError(f"{args['pin']} is not an allowlisted input; simulate an input pin "
                             "(mode = \"input\" in its board's [pins])")
        on = args["value"] == "on"
        await hardware.boards[board].simulate_input(pin, float(rule.line(on)))
        log.info("input_simulated board=%s pin=%s value=%s by=%s", board, pin, args["value"],
                 requester.caller)
    except (EdgeError, BoardError) as exc:
        return OpResult(False, str(exc), exit_code=2)
    return OpResult(True, f"{rule.label} simulated {args['value']}",
                    {"board": board, "pin": pin, "value": args["value"]})


async def simulate_sensor(target: OpTarget, args: dict[str, Any], requester: Requester) -> OpResult:
    """``sensors.simulate``: a simulated sensor's quantity held (or released) and read at once."""
    value = None if args.get("release") else args["value"]
    try:
        readings = await target.automation.sensors.simulate(args["name"], args["quantity"], value)
    except EdgeError as exc:
        return OpResult(False, str(exc), exit_code=2)
    shown = ", ".join(f"{q} {r}" for q, r in readings.items()) or "no readings held"
    what = "released" if value is None else "held"
    return OpResult(True, f"{args['name']}.{args['quantity']} {what}: {shown}",
                    {"name": args["name"], "quantity": args["quantity"], "value": value})


def _sim_input(words: list[str]) -> dict[str, Any] | None:
    if len(words) == 2 and words[1].lower() in ("on", "off"):
        return {"pin": words[0], "value": words[1].lower()}
    return None


def _sim_sensor(words: list[str]) -> dict[str, Any] | None:
    if len(words) == 3 and words[2].lower() == "release":
        return {"name": words[0], "quantity": words[1], "release": True}
    if len(words) == 3:
        try:
            return {"name": words[0], "quantity": words[1], "value": float(words[2])}
        except ValueError:
            raise ValueError("Usage: /sim SENSOR QUANTITY VALUE (the value is a number)") from None
    return None


SIM_INPUT = Chat("/sim PIN on|off", "make an input of a simulated board active or not (admins)",
                 _sim_input)
SIM_SENSOR = Chat("/sim SENSOR QUANTITY VALUE|release",
                  "hold (or release) a simulated sensor's reading (admins)", _sim_sensor)
