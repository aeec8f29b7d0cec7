"""The Pi header's GPIO lines by name, for the spec and the driver alike (the spec must not
import the driver, which imports gpiozero)."""

from __future__ import annotations

HEADER_GPIO = frozenset(f"GPIO{n}" for n in range(28))
"""GPIO0..GPIO27, the lines of the 40-pin header. Any of them drives a hobby servo declared in
``[boards.NAME.servos]`` (gpiozero's AngularServo; lgpio times the pulses on a Pi)."""
SERVO_PULSE_US = (1000, 2000)
"""The header's pulse widths (µs) at a servo's ends when its section sets none (gpiozero's)."""
