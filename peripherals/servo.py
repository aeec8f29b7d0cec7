"""A hobby servo's calibration: the keys of one ``[boards.NAME.servos.PIN]`` section, the same on
every board that drives servos, and the arithmetic from an angle to a pulse.

Angles are degrees 0..180 everywhere (the tools, ``edge-cli gpio servo``, rules, Home Assistant);
a servo that turns less, or must not be driven to its ends, narrows its range inside that.
``min_angle`` is driven with ``min_pulse_us`` and ``max_angle`` with ``max_pulse_us``, in a
straight line between them. Pulse widths left unset are the board's own: gpiozero's 1000..2000 µs
on the Pi header, the Arduino Servo library's 544..2400 µs on an Uno.

>>> arm = ServoOptions(min_angle=0, max_angle=90, min_pulse_us=500, max_pulse_us=2500)
>>> arm.pulse_us(45, (1000, 2000)), arm.fraction(90)
(1500.0, 1.0)
>>> ServoOptions(max_angle=200)
Traceback (most recent call last):
...
pydantic_core._pydantic_core.ValidationError: 1 validation error for ServoOptions
...
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Self

from pydantic import Field, model_validator

from peripherals.exc import PinModeError, UnknownPin
from peripherals.options import Options

DEGREES = (0.0, 180.0)
"""The angles every door takes; a servo's own range lies inside."""


class ServoOptions(Options):
    """One servo: its angle range, the pulse widths at its ends and what the safe state does."""

    min_angle: float = Field(default=0.0, ge=0, le=180)
    """The smallest angle the servo is driven to (degrees)."""
    max_angle: float = Field(default=180.0, ge=0, le=180)
    """The largest angle the servo is driven to (degrees)."""
    min_pulse_us: int | None = Field(default=None, ge=100, le=5000)
    """The pulse (µs) that turns it to ``min_angle``; unset: the board's (1000 on the Pi header,
    544 on an Uno)."""
    max_pulse_us: int | None = Field(default=None, ge=100, le=5000)
    """The pulse (µs) that turns it to ``max_angle``; unset: the board's (2000 on the Pi header,
    2400 on an Uno)."""
    frame_us: int = Field(default=20_000, ge=5_000, le=50_000)
    """Pi header: the time between pulses (20000 µs: 50 Hz, what hobby servos expect). The
    Uno's Servo library keeps its own."""
    safe_angle: float | None = None
    """Where the safe state (shutdown, ``gpio safe``, a lost link) turns it; unset: the pulses
    stop and the servo goes limp where it is."""

    @model_validator(mode="after")
    def _check(self) -> Self:
        if self.min_angle >= self.max_angle:
            raise ValueError(f"min_angle {self.min_angle:g} must be below max_angle "
                             f"{self.max_angle:g}")
        if self.min_pulse_us is not None and self.max_pulse_us is not None \
                and self.min_pulse_us >= self.max_pulse_us:
            raise ValueError(f"min_pulse_us {self.min_pulse_us} must be below max_pulse_us "
                             f"{self.max_pulse_us}")
        if max(self.min_pulse_us or 0, self.max_pulse_us or 0) >= self.frame_us:
            raise ValueError(f"a pulse must be shorter than frame_us ({self.frame_us} µs)")
        if self.safe_angle is not None and not self.min_angle <= self.safe_angle <= self.max_angle:
            raise ValueError(f"safe_angle {self.safe_angle:g} is outside min_angle..max_angle "
                             f"({self.min_angle:g}..{self.max_angle:g})")
        return self

    def check(self, pin: str, angle: float) -> None:
        """PinModeError unless ``angle`` is within this servo's range."""
        if not self.min_angle <= angle <= self.max_angle:
            raise PinModeError(f"angle {angle:g} is outside {pin}'s range {self.min_angle:g}.."
                               f"{self.max_angle:g} degrees ([boards.NAME.servos.{pin}])")

    def fraction(self, angle: float) -> float:
        """Where ``angle`` lies in the range: 0.0 at ``min_angle``, 1.0 at ``max_angle``."""
        return (angle - self.min_angle) / (self.max_angle - self.min_angle)

    def pulses(self, board_default: tuple[int, int]) -> tuple[int, int]:
        """(min, max) pulse widths in µs, the board's default for those not set."""
        return (self.min_pulse_us or board_default[0], self.max_pulse_us or board_default[1])

    def pulse_us(self, angle: float, board_default: tuple[int, int]) -> float:
        """The pulse width (µs) that turns the servo to ``angle``."""
        low, high = self.pulses(board_default)
        return low + self.fraction(angle) * (high - low)



def declared_servos(servos: Mapping[str, ServoOptions],
                    resolve: Callable[[str], str]) -> dict[str, ServoOptions]:
    """``servos`` keyed by canonical pin name (``resolve`` turns an alias or a name into one,
    raising UnknownPin); a name the board does not know is left out (``config check`` reports
    it at its key)."""
    found = {}
    for spec, options in servos.items():
        try:
            found[resolve(spec)] = options
        except UnknownPin:
            continue
    return found
