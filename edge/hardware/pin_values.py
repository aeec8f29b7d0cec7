"""What a pin's value means, worded once for every view (``gpio read``, ``pins``, ``/gpio``, the
tools' results the model reads): a level is on or off, a PWM pin shows its duty, an analog pin
its fraction of the reference (and the reading of the sensor that scales it, in that sensor's
unit), a servo the angle it was last turned to through the door.

:class:`PinMeanings` is what the door (:class:`edge.hardware.Hardware`) knows for that: which
sensor scales each analog pin (from ``[sensors.NAME]``) and each servo's last angle (a board
cannot read a servo back; its pin's duty means nothing).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from edge.config.sensors import AnalogSensorConfig
from edge.hardware.pins import Pin, locate, wiring
from peripherals.base import Board, PinMode
from peripherals.exc import BoardError
from peripherals.sensors.base import Reading, Scaling

if TYPE_CHECKING:
    from edge.config.model import Config

ValueKind = Literal["level", "duty", "angle", "fraction"]
"""What a pin's logical value is: a level (1 on, 0 off), a PWM duty (0..1), a servo's angle in
degrees, or an analog pin's fraction of its reference (0..1)."""


@dataclass(frozen=True)
class PinValue:
    """A pin's logical value and what it means, worded once for every view (``gpio read``,
    ``pins``, ``/gpio``, the tools' results the model reads).

    >>> knob = Pin("uno", "A0", PinMode.ANALOG, aliases=("knob",))
    >>> PinValue(knob, 511 / 1023, "fraction").sentence
    'uno:A0 (knob) reads 0.4995'
    >>> lm35 = Reading("temperature", 24.98, "°C")
    >>> PinValue(knob, 0.04995, "fraction", lm35, "lm35").shown
    '0.04995 (lm35: temperature 24.98 °C)'
    >>> PinValue(Pin("uno", "D10", PinMode.PWM, aliases=("arm",)), 90, "angle").sentence
    'uno:D10 (arm) is at 90 degrees'
    >>> tank = Pin("gpio", "GPIO5", PinMode.INPUT, aliases=("tank2",), active_low=True)
    >>> PinValue(tank, 1.0, "level").sentence
    'gpio:GPIO5 (tank2) is on (switch closed: line low, pulled up)'
    """

    rule: Pin
    value: float
    kind: ValueKind
    scaled: Reading | None = None
    """What the sensor reading this analog pin makes of the value (when it has a unit)."""
    sensor: str | None = None
    """That sensor's name."""

    @property
    def shown(self) -> str:
        """The value in words: ``on``/``off``, ``duty 0.50``, ``90 degrees``, ``0.4995``
        (with the sensor's reading where one scales it)."""
        if self.kind == "angle":
            return f"{self.value:g} degrees"
        if self.kind == "duty":
            return f"duty {self.value:.2f}"
        if self.kind == "fraction":
            text = f"{self.value:.4g}"
            if self.scaled is not None:
                text += f" ({self.sensor}: {self.scaled.quantity} {number(self.scaled.value)} " \
                        f"{self.scaled.unit})"
            return text
        state = "on" if self.value else "off"
        words = wiring(self.rule, bool(self.value))
        return f"{state} ({words})" if words else state

    @property
    def sentence(self) -> str:
        """``uno:A0 (knob) reads 0.4995``, ``gpio:GPIO17 (led) is on``, ``... is at 90 degrees``;
        an input names its line: ``... is on (switch closed: line low, pulled up)``."""
        if self.kind == "fraction":
            return f"{self.rule.label} reads {self.shown}"
        if self.kind == "angle":
            return f"{self.rule.label} is at {self.shown}"
        if self.kind == "duty":
            return f"{self.rule.label} is at PWM {self.shown}"
        return f"{self.rule.label} is {self.shown}"

    def as_dict(self) -> dict[str, object]:
        """The fields ``--json`` adds beside ``value``: ``kind``, ``shown``, and ``reading``
        (sensor, quantity, value, unit) where a sensor scales the pin."""
        out: dict[str, object] = {"kind": self.kind, "shown": self.shown}
        if self.kind == "level" and self.rule.mode is PinMode.INPUT:
            out["line"] = "high" if self.rule.line(bool(self.value)) else "low"
        if self.kind == "angle":
            out["angle"] = self.value
        if self.scaled is not None:
            out["reading"] = {"sensor": self.sensor, "quantity": self.scaled.quantity,
                              "value": self.scaled.value, "unit": self.scaled.unit}
        return out


def number(value: float) -> str:
    """A measured value as people read it: four significant digits, never an exponent for
    the sizes sensors give.

    >>> number(24.975), number(1013.25), number(101325.0), number(0.000123)
    ('24.98', '1013', '101325', '0.000123')
    """
    return f"{value:.4g}" if abs(value) < 10_000 else f"{value:.0f}"


class PinMeanings:
    """The sensor that scales each analog pin, and each servo's last angle."""

    def __init__(self, scalings: Mapping[tuple[str, str], tuple[str, Scaling]] | None = None):
        self._scalings = dict(scalings or {})
        self._angles: dict[tuple[str, str], float] = {}

    def turned(self, rule: Pin, angle: float) -> None:
        """The servo on ``rule`` was turned to ``angle``."""
        self._angles[(rule.board, rule.pin)] = angle

    def driven(self, rule: Pin) -> None:
        """Something else drives ``rule`` (a level, a duty, the safe state): no angle now."""
        self._angles.pop((rule.board, rule.pin), None)

    def forget(self) -> None:
        """Every servo's angle (the boards are released)."""
        self._angles.clear()

    def angle(self, board: str, pin: str) -> float | None:
        return self._angles.get((board, pin))

    def of(self, rule: Pin, value: float) -> PinValue:
        """What ``value`` (a logical read) means on ``rule``."""
        key = (rule.board, rule.pin)
        if key in self._angles:
            return PinValue(rule, value, "angle")
        if rule.mode is PinMode.ANALOG:
            sensor, scaling = self._scalings.get(key, ("", None))
            if scaling is not None and scaling.unit:
                return PinValue(rule, value, "fraction", scaling.reading(value), sensor)
            return PinValue(rule, value, "fraction")
        return PinValue(rule, value, "duty" if rule.mode is PinMode.PWM else "level")

    @classmethod
    def from_config(cls, config: Config, boards: Mapping[str, Board],
                    pins: Iterable[Pin]) -> PinMeanings:
        """The first analog sensor reading each pin, with its calibration (a sensor whose pin
        is wrong is the automation's ConfigError, not this one's)."""
        pins = list(pins)
        found: dict[tuple[str, str], tuple[str, Scaling]] = {}
        for name, section in config.sensors.items():
            if isinstance(section, AnalogSensorConfig):
                try:
                    found.setdefault(locate(boards, section.pin, pins), (name, section.scaling))
                except BoardError:
                    continue
        return cls(found)
