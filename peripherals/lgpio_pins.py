"""gpiozero's lgpio factory with a PWM pin that keeps its exact duty, so that a servo's pulse
is the width its angle asks for.

gpiozero 2.0.1 (``gpiozero/pins/lgpio.py``, ``LGPIOPin._set_state``) hands lgpio the duty as
``int(value * 100)``: a whole percent, 200 µs steps at 50 Hz, so a servo on the header had about
six positions and 90 degrees (1500 µs) came out as 1400 µs. lgpio's ``tx_pwm`` takes the duty as
a float and times the pulse to the microsecond (it is the same pulse thread ``tx_servo`` uses,
whose narrower 500..2500 µs and 40..500 Hz would not take every ``[boards.NAME.servos]``
calibration). Everything else is gpiozero's own pin: AngularServo still computes the duty.

Stopping the pulses leaves the line low. lgpio's pulse thread (``lgPthTx.c``) drops a stopped
record without another write, so the line stayed at the level of the moment: high when it
stopped inside a pulse (a frame's 5 to 10 %; once in a kernel test's run, a servo's "off" left
its line high for good). The thread writes only under the lock ``tx_pwm`` stops it under, so a
write after the stop is the last word.
"""

from __future__ import annotations

import lgpio
from gpiozero.exc import PinInvalidState
from gpiozero.pins import lgpio as gpiozero_lgpio


class ExactDutyLGPIOPin(gpiozero_lgpio.LGPIOPin):  # type: ignore[misc]  # gpiozero is untyped
    """gpiozero's lgpio pin whose PWM duty is the fraction it is given, not a whole percent."""

    _pwm: tuple[float, float] | None
    """(frequency Hz, duty %) while PWM runs: gpiozero's own record, which its pin reads."""

    def _set_state(self, value: float) -> None:
        if not self._pwm:
            super()._set_state(value)
            return
        frequency, _ = self._pwm
        duty = value * 100  # gpiozero 2.0.1 stores int(value * 100) here: a whole percent
        try:
            lgpio.tx_pwm(self.factory._handle, self._number, frequency, duty)
        except lgpio.error:
            raise PinInvalidState(f'invalid state "{value}" for pin {self!r}') from None
        self._pwm = (frequency, duty)

    def _set_frequency(self, value: float | None) -> None:
        stopping = bool(self._pwm) and not value
        super()._set_frequency(value)
        if stopping:
            lgpio.gpio_write(self.factory._handle, self._number, 0)


class LGPIOFactory(gpiozero_lgpio.LGPIOFactory):  # type: ignore[misc]  # gpiozero is untyped
    """gpiozero's LGPIOFactory, its pins :class:`ExactDutyLGPIOPin`."""

    def __init__(self, chip: int | None = None) -> None:
        super().__init__(chip)
        self.pin_class = ExactDutyLGPIOPin
