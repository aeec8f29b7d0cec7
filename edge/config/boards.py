"""``[boards.NAME]``: a board the agent drives, by its ``type`` (a board type's options from
:data:`peripherals.factory.BOARDS`, with ``type`` and the allowlisted ``pins`` added), and each
allowlisted pin's own section (``[boards.NAME.pins.PIN]``)."""

from __future__ import annotations

import functools
from typing import Annotated, Any, Literal, Self

from pydantic import Field, SerializerFunctionWrapHandler, TypeAdapter, model_serializer, model_validator

from edge.config.section import Seconds, Section, SectionByType, adapter_section
from peripherals.base import BoardOptions, PinMode, Pull
from peripherals.factory import BOARDS

SWITCHES_PER_MINUTE = {PinMode.OUTPUT: 6, PinMode.PWM: 60}
"""Each output's own budget when its ``max_switches_per_minute`` is not set. An output pin may
drive a relay or a contactor, whose contacts wear with every switch and whose load (a pump, a
compressor) must not short-cycle: 6 changes (3 on/off cycles) a minute, a tenth of what a
typical small relay is rated for under load (about 30 operations a minute). A PWM pin drives
a transistor (an LED, a motor driver, a servo) with no contacts: 60, a dragged slider's worth."""


class PinConfig(Section):
    """One allowlisted pin: its mode (analog needs an arduino or stm32 board), and for outputs a
    safe level, an on-time limit and a budget of switches."""

    mode: PinMode
    safe: Literal["off", "on"] | None = None
    max_on_seconds: Seconds | None = Field(default=None, gt=0)
    max_switches_per_minute: int | None = Field(default=None, ge=1, le=6000)
    """Outputs: at most this many changes of value in any minute, whoever asks, all doors
    together (the safe level is never refused but counts); default 6 for an output (a relay),
    60 for a pwm pin."""
    pull: Pull = Pull.UP
    """Inputs: the resistor that holds the line while nothing drives it (a switch or button
    wired to the other rail pulls it away). It also says when the input is on: while the switch
    is closed, a low line with ``"up"``, a high line with ``"down"``."""
    active: Literal["high", "low"] | None = None
    """Inputs: the line level at which the input is on (gpiozero's ``active_state``). Needed with
    ``pull = "none"`` (something else drives the line); with a pull, only to turn the meaning
    round (``active = "high"`` with ``pull = "up"``: on while the switch is open)."""
    active_low: bool = False
    """Outputs: the line is low when the pin is on (most relay boards). ``on``/``off``, the safe
    level and readings stay logical: a safe "off" on an active-low pin drives the line high."""
    bounce_ms: int = Field(default=0, ge=0, le=10_000)
    """Inputs: ignore edges until the level has been stable this long (button debounce)."""
    approval: bool = True
    """Outputs: false lets the model switch this pin without asking anyone under ``supervised``
    autonomy (a fan, lights); the allowlist, budgets and interlocks still apply."""

    @model_validator(mode="after")
    def check(self) -> Self:
        if self.mode in (PinMode.INPUT, PinMode.ANALOG) and (
                self.safe is not None or self.max_on_seconds is not None
                or self.max_switches_per_minute is not None):
            raise ValueError("safe, max_on_seconds and max_switches_per_minute apply to output "
                             f"and pwm pins, not {self.mode.value}")
        if self.mode in (PinMode.INPUT, PinMode.ANALOG) and not self.approval:
            raise ValueError(f"approval applies to output and pwm pins, not {self.mode.value}: "
                             "nothing switches an input; remove it")
        if self.safe == "on" and self.max_on_seconds is not None:
            raise ValueError("safe = \"on\" and max_on_seconds contradict each other (the timer "
                             "would switch the pin off, the safe state back on); remove one")
        if self.bounce_ms and self.mode is not PinMode.INPUT:
            raise ValueError(f"bounce_ms applies to input pins, not {self.mode.value}")
        if self.mode is PinMode.INPUT:
            self._check_input()
        elif self.active is not None:
            raise ValueError(f"active applies to input pins, not {self.mode.value} (an output "
                             "wired to be on at a low line takes active_low = true)")
        return self

    def _check_input(self) -> None:
        """An input is on when it is active, and one key says when that is
        (:func:`edge.hardware.pins.input_active_low`)."""
        if self.active_low:
            same = (' (what pull = "up" means already: just remove active_low)'
                    if self.pull is Pull.UP else "")
            raise ValueError('active_low applies to outputs; an input on while its line is low '
                             f'takes active = "low"{same}')
        if self.pull is Pull.NONE and self.active is None:
            raise ValueError('an input with pull = "none" must say when it is on: add active = '
                             '"high" (on while its line is high) or active = "low"')

    @model_serializer(mode="wrap")
    def _shown(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """The pin as ``config show`` (and every dump) gives it: ``pull`` only on an input, the
        one mode it means something for."""
        data: dict[str, Any] = handler(self)
        if self.mode is not PinMode.INPUT:
            data.pop("pull", None)
        return data

    @property
    def switch_budget(self) -> int | None:
        """``max_switches_per_minute``, or the default for the pin's mode (None for inputs)."""
        return self.max_switches_per_minute or SWITCHES_PER_MINUTE.get(self.mode)


class BoardSection(Section, BoardOptions):
    """What every ``[boards.NAME]`` section has besides its driver's options: its type and the
    pins the agent may use (the allowlist)."""

    type: str
    pins: dict[str, PinConfig] = {}


@functools.cache
def board_section(kind: str) -> type[BoardSection] | None:
    """Board type ``kind``'s ``[boards.NAME]`` section, made on first use: its options, with
    ``type`` and ``pins`` (by default, the pins the spec allowlists); None when there is no such
    type."""
    spec = BOARDS.find(kind)
    if spec is None:
        return None
    pins = {key: PinConfig.model_validate(pin) for key, pin in spec.default_pins.items()}
    return adapter_section(spec.kind, spec.options, BoardSection, pins=(dict[str, PinConfig], pins))


DEFAULT_BOARD = "gpio"
"""The type of a section that names none, and of the one board there is with no [boards]."""
_BY_TYPE = SectionByType(board_section, lambda: BOARDS.kinds, default=DEFAULT_BOARD)

BoardConfig = Annotated[BoardSection, _BY_TYPE]
"""One ``[boards.NAME]`` section, by its ``type`` (default: the Pi header)."""


def board_sections() -> dict[str, type[BoardSection]]:
    """Every board type's section, in the registry's order (built-in first): loads them all."""
    return _BY_TYPE.members()


@functools.cache
def _board_adapter() -> TypeAdapter[BoardConfig]:
    return TypeAdapter(BoardConfig)


def parse_board(data: object) -> BoardSection:
    """One section on its own (doctor reads each of a file's that way); a ValidationError if it
    is wrong."""
    return _board_adapter().validate_python(data)
