"""Automation: schedules, rules and alerts that act through the security policy.

The face is lazy (PEP 562): the names in ``__all__`` load from their modules when first used, so
importing any module of the package (which runs this file first) loads none of them.

The face is lazy (PEP 562): the names in ``__all__`` load from their modules when first used, so
importing any module of the package (which runs this file first) loads none of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from edge.core.faces import lazy_face

if TYPE_CHECKING:
    from edge.automation.actions import ActionFailed
    from edge.automation.assembly import Automation, build_sensor_hub
    from edge.automation.clock import Clock, ManualClock, SystemClock
    from edge.automation.engine import RuleEngine

__all__ = ["ActionFailed", "Automation", "Clock", "ManualClock", "RuleEngine", "SystemClock",
           "build_sensor_hub"]

_HOMES = {
    "actions": ("ActionFailed",),
    "assembly": ("Automation", "build_sensor_hub"),
    "clock": ("Clock", "ManualClock", "SystemClock"),
    "engine": ("RuleEngine",),
}
"""Each module, and the names of ``__all__`` it holds."""

__getattr__ = lazy_face(__name__, _HOMES)
