"""The Arduino Uno's pin layout, shared by its driver (:mod:`peripherals.arduino`) and its board
spec (:mod:`peripherals.board_types`), which the config check reads without importing the driver
(pyfirmata2, pyserial).

>>> sorted(SERVO_PINS), sorted(PWM_PINS)
(['D10', 'D9'], [3, 5, 6, 9, 10, 11])
"""

from __future__ import annotations

from peripherals.exc import UnknownPin

PWM_PINS = frozenset({3, 5, 6, 9, 10, 11})
"""Digital pins with hardware PWM (Timers 0, 1 and 2)."""

SERVO_PINS = frozenset({"D9", "D10"})
"""Where an Uno drives a hobby servo (Firmata's Servo library, on Timer1): the driver's
``servo_pins`` and the spec's."""
SERVO_PULSE_US = (544, 2400)
"""The Servo library's pulse widths (µs) at 0 and 180 degrees, for a servo that sets none."""


def uno_pin_name(spec: str) -> str:
    """The Uno's own name of a pin (``13`` -> ``D13``, ``14`` -> ``A0``); UnknownPin says why not.

    >>> uno_pin_name("13"), uno_pin_name("a2"), uno_pin_name("15")
    ('D13', 'A2', 'A1')
    """
    text = str(spec).strip().upper()
    if text.startswith("A") and text[1:].isdigit() and int(text[1:]) <= 5:
        return f"A{int(text[1:])}"
    number = text[1:] if text.startswith("D") else text
    if number.isdigit():
        n = int(number)
        if 2 <= n <= 13:
            return f"D{n}"
        if 14 <= n <= 19:
            return f"A{n - 14}"
        if n in (0, 1):
            raise UnknownPin(f"{spec!r}: D0 and D1 carry the serial link to the agent")
    raise UnknownPin(f"{spec!r} is not an Uno pin; use D2..D13 or A0..A5")
