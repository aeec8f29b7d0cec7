"""The one door to the pins: every caller (the model's tools, chat commands, the control socket,
MCP, MQTT, the fleet, rules, schedules, trips) names a pin and who asks; :class:`Hardware`
resolves it, asks the policy, runs the guards and acts.

| what | module |
| --- | --- |
| the door: read, write, PWM, servo, safe state, auto-off, read-back | ``door.py`` |
| the allowlisted pins, their modes, aliases and what "on" means on each | ``pins.py`` |
| interlock groups: check and act as one step per group of outputs | ``atomic.py`` |
| who holds a line (a one-shot command, another process) | ``claims.py`` |
| what a held output must stay at, and for how long | ``holds.py`` |
| the boards' inputs as events the rules and the bridge hear | ``board_events.py`` |
| a pin's value in words (``on``, a duty, an angle, a reading) | ``pin_values.py`` |
| what the door tells of every outcome (audit, receipts, listeners) | ``outcomes.py`` |
| the boards from the config, the pin factory, and the door built on them | ``board_setup.py`` |

The layer below is ``peripherals/`` (the boards, which know nothing of agents); gpiozero keeps
its pin layer in ``gpiozero/pins/`` the same way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from edge.core.faces import lazy_face

if TYPE_CHECKING:
    from edge.hardware.board_setup import build_hardware
    from edge.hardware.door import Hardware
    from edge.hardware.pins import Pin

__all__ = ["Hardware", "Pin", "build_hardware"]

_HOMES = {"board_setup": ("build_hardware",), "door": ("Hardware",), "pins": ("Pin",)}
"""Each module, and the names of ``__all__`` it holds."""

__getattr__ = lazy_face(__name__, _HOMES)
