"""An HC-SR04 on gpiozero's mock pins: the trigger pin answers each ping with an echo pulse on the
echo pin, its edges stamped with the times the pulse stands for (exact distances under any
load). Used by the tests and by ``bench sensors``."""

from __future__ import annotations

import time
from typing import Any

from gpiozero.pins.mock import MockPin

SPEED_OF_SOUND = 343.26  # m/s, as gpiozero reckons


class EchoPin(MockPin):  # type: ignore[misc]  # gpiozero has no types
    """The module's echo output: ``pulse`` raises and drops it with edges ``seconds`` apart."""

    def pulse(self, seconds: float) -> None:
        start = time.monotonic()
        for level, at in ((True, start), (False, start + seconds)):
            self._state, self._last_change = level, at
            if self._when_changed is not None:
                self._call_when_changed()


class TriggerPin(MockPin):  # type: ignore[misc]
    """The module's trigger input: each ping is answered at once by an echo from ``distance``
    cm away (None: nothing answers)."""

    def __init__(self, factory: Any, info: Any, echo_pin: EchoPin | None = None):
        super().__init__(factory, info)
        self.echo_pin = echo_pin
        self.distance: float | None = None
        self.pings = 0

    def _set_state(self, value: Any) -> None:
        super()._set_state(value)
        if value:
            self.pings += 1
            if self.distance is not None and self.echo_pin is not None:
                self.echo_pin.pulse(self.distance / 100 * 2 / SPEED_OF_SOUND)
