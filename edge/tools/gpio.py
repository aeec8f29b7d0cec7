"""Pin tools: ``gpio_read``, ``gpio_write``, ``gpio_pwm``, ``servo_write`` and ``board_status``.

Each acts through the hardware's one door, so no caller (model, chat command, control socket)
reaches a pin around the policy. Values are worded by the door (:meth:`Hardware.value_of`): a
level is on/off, a PWM pin shows its duty, an analog pin its value (and the reading of the sensor
that scales it), a servo its angle; the model reads the same text people do.

``gpio_write`` and ``gpio_pwm`` take ``hold_seconds`` from ``edge-cli gpio write --hold``: the
caller will hold what it sets that long, which the door refuses when the pin's
``max_on_seconds`` is shorter. It is left out of the schema the model sees (nothing here holds
a pin; the model's holds are automation's ``for``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field
from pydantic.json_schema import SkipJsonSchema

from edge.core.requester import Requester
from edge.tools.base import ModelTool, P, Tool, ToolArgs, ToolResult
from peripherals.base import PinMode
from peripherals.exc import BoardError

if TYPE_CHECKING:  # what the tools act on: the catalog describes them without loading it
    from edge.hardware import Hardware
    from edge.hardware.pin_values import PinValue
    from edge.hardware.pins import Pin

PIN_HELP = "Pin name or alias, e.g. 'led', 'GPIO17', or 'board:pin' when several boards exist"


class PinArgs(ToolArgs):
    pin: str = Field(description=PIN_HELP)


class HeldArgs(PinArgs):
    hold_seconds: SkipJsonSchema[float | None] = Field(default=None, gt=0)
    """How long the caller holds what it sets (``--hold``); not shown to the model."""


class WriteArgs(HeldArgs):
    value: Literal["on", "off"] = Field(description="Level to drive the output pin to")


class PwmArgs(HeldArgs):
    duty: float = Field(ge=0.0, le=1.0, description="Duty cycle from 0.0 (off) to 1.0 (fully on)")
    frequency: float | None = Field(default=None, gt=0, le=100_000, description="PWM frequency in Hz")


class ServoArgs(PinArgs):
    angle: float = Field(ge=0.0, le=180.0, description="Servo angle in degrees, 0 to 180")


class NoArgs(ToolArgs):
    pass


def pin_data(rule: Pin, value: float | None, shown: PinValue | None = None) -> dict[str, Any]:
    """A pin for ``--json``: its facts and ``value``; with ``shown``, what the value means
    (``kind``, ``shown``, and ``angle`` or the sensor's ``reading``)."""
    return {"board": rule.board, "pin": rule.pin, "aliases": list(rule.aliases),
            "mode": rule.mode.value, "value": value,
            "safe": None if rule.safe is None else ("on" if rule.safe else "off"),
            "active_low": rule.active_low, **(shown.as_dict() if shown else {})}


def read_back(hardware: Hardware, rule: Pin, asked: float) -> tuple[float, str]:
    """What the board said the pin is after the actuation (the value the result carries; what
    was asked where the board cannot say), and a note when it says otherwise than asked."""
    done = hardware.last_actuation.get((rule.board, rule.pin))
    if done is None or done.read_back is None:
        return asked, ""
    if abs(done.read_back - asked) > 0.01:
        shown = hardware.value_of(rule, done.read_back).shown
        return done.read_back, f" (but the board reads back {shown})"
    return done.read_back, ""


class PinTool(ModelTool[P]):
    def __init__(self, hardware: Hardware):
        self.hardware = hardware


class GpioReadTool(PinTool[PinArgs]):
    name = "gpio_read"
    description = ("Read an allowlisted pin: on or off; a PWM pin its duty (0..1), an analog pin "
                   "its value (0..1 of the reference, and the sensor's reading with its unit), "
                   "a servo its angle.")
    Params = PinArgs

    async def run(self, params: PinArgs, requester: Requester) -> ToolResult:
        rule, value = await self.hardware.read(params.pin, requester)
        shown = self.hardware.value_of(rule, value)
        return ToolResult(True, shown.sentence, data=pin_data(rule, value, shown))


class GpioWriteTool(PinTool[WriteArgs]):
    name = "gpio_write"
    description = "Switch an allowlisted output pin on or off."
    Params = WriteArgs

    async def run(self, params: WriteArgs, requester: Requester) -> ToolResult:
        on = params.value == "on"
        rule = await self.hardware.write(params.pin, on, requester,
                                         hold_seconds=params.hold_seconds)
        value, seen = read_back(self.hardware, rule, 1.0 if on else 0.0)
        note = f" (auto-off after {rule.max_on_seconds:g} s)" if on and rule.max_on_seconds else ""
        return ToolResult(True, f"{rule.label} set {params.value}{seen}{note}",
                          data=pin_data(rule, value))


class GpioPwmTool(PinTool[PwmArgs]):
    name = "gpio_pwm"
    description = "Set the PWM duty cycle (0..1) and optionally the frequency of an allowlisted PWM pin."
    Params = PwmArgs

    async def run(self, params: PwmArgs, requester: Requester) -> ToolResult:
        rule = await self.hardware.pwm(params.pin, params.duty, params.frequency, requester,
                                       hold_seconds=params.hold_seconds)
        value, seen = read_back(self.hardware, rule, params.duty)
        return ToolResult(True, f"{rule.label} PWM duty {params.duty:.2f}{seen}",
                          data=pin_data(rule, value))


class ServoWriteTool(PinTool[ServoArgs]):
    name = "servo_write"
    description = "Turn a hobby servo on an allowlisted pwm pin to an angle (0-180 degrees)."
    Params = ServoArgs

    async def run(self, params: ServoArgs, requester: Requester) -> ToolResult:
        rule = await self.hardware.servo(params.pin, params.angle, requester)
        shown = self.hardware.value_of(rule, params.angle)
        return ToolResult(True, f"{rule.label} servo at {params.angle:g} degrees",
                          data=pin_data(rule, params.angle, shown))


class GpioSafeTool(PinTool[PinArgs]):
    name = "gpio_safe"
    description = "Return an allowlisted output pin to its configured safe level (off if it has none)."
    Params = PinArgs

    async def run(self, params: PinArgs, requester: Requester) -> ToolResult:
        rule = await self.hardware.make_safe(params.pin, requester)
        level = "on" if rule.safe else "off"
        value, seen = read_back(self.hardware, rule, 1.0 if rule.safe else 0.0)
        return ToolResult(True, f"{rule.label} back to its safe level ({level}){seen}",
                          data=pin_data(rule, value))


class BoardStatusTool(PinTool[NoArgs]):
    name = "board_status"
    description = "List the boards, whether they are simulated, and every allowlisted pin with its mode and state."
    Params = NoArgs

    async def run(self, params: NoArgs, requester: Requester) -> ToolResult:
        boards = [status.as_dict() for status in self.hardware.status()]
        pins = []
        lines = []
        for b in boards:
            lines.append(f"board {b['name']} ({b['kind']}): "
                         f"{'connected' if b['connected'] else 'not connected'}, {b['detail']}")
        for rule in self.hardware.pin_list():
            shown = await self._value(rule, requester)
            entry = pin_data(rule, None if shown is None else shown.value, shown)
            entry.update(max_on_seconds=rule.max_on_seconds)
            pins.append(entry)
            state = "" if shown is None else f" = {shown.shown}"
            extra = (f", safe {entry['safe']}" if entry["safe"] else "") + (
                ", active-low" if rule.active_low and rule.mode is not PinMode.INPUT else "")
            lines.append(f"  {rule.label} {rule.mode.value}{state}{extra}")
        if not pins:
            lines.append("  no pins are allowlisted")
        return ToolResult(True, "\n".join(lines), data={"boards": boards, "pins": pins})

    async def _value(self, rule: Pin, requester: Requester) -> PinValue | None:
        """The pin's value, where reading it changes nothing: every pin in a running agent;
        without one, inputs and analog pins (an output is nobody's to report)."""
        if not self.hardware.resident and rule.mode not in (PinMode.INPUT, PinMode.ANALOG):
            return None
        try:
            _, value = await self.hardware.read(f"{rule.board}:{rule.pin}", requester)
        except BoardError:  # a board that is down: its line above says why
            return None
        return self.hardware.value_of(rule, value)


def hardware_tools(hardware: Hardware) -> list[Tool]:
    return [GpioReadTool(hardware), GpioWriteTool(hardware), GpioPwmTool(hardware),
            ServoWriteTool(hardware), GpioSafeTool(hardware), BoardStatusTool(hardware)]
