"""The Arduino Uno's pin layout, shared by its driver (:mod:`peripherals.arduino`) and its board
spec (:mod:`peripherals.board_types`), which the config check reads without importing the driver
(pyfirmata2, pyserial).

>>> sorted(SERVO_PINS), sorted(PWM_PINS)
(['D10', 'D9'], [3, 5, 6, 9, 10, 11])
"""

from __future__ import annotations

PWM_PINS = frozenset({3, 5, 6, 9, 10, 11})
"""Digital pins with hardware PWM (Timers 0, 1 and 2)."""

SERVO_PINS = frozenset({"D9", "D10"})
"""Where an Uno drives a hobby servo (Firmata's Servo library, on Timer1): the driver's
``servo_pins`` and the spec's."""
