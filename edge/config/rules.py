"""``[[rules]]`` (a board event or a sensor threshold, then actions) and ``[heartbeat]``.

The text of ``when`` and of each action is parsed and checked against the boards, the sensors and
the policy by :mod:`edge.automation` when the agent (or ``edge-cli config check``) starts; here
it is only data.

>>> RuleConfig(name="fan", when="greenhouse.temperature > 28", then="gpio write fan on").then
['gpio write fan on']
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, BeforeValidator, Field

from edge.config.section import Section, check_name


def _as_list(value: object) -> object:
    return [value] if isinstance(value, str) else value


Actions = Annotated[list[str], BeforeValidator(_as_list)]
"""One action as text, or a list of them, run in order."""


class RuleConfig(Section):
    """``when`` something happens, ``then`` act (as caller ``rule:NAME``, through the policy).

    ``when`` is a board event (``button pressed``, ``GPIO27 falling``, ``door changes``,
    ``board uno down``) or a sensor threshold (``greenhouse.temperature > 28``)."""

    name: Annotated[str, AfterValidator(check_name)]
    when: str = Field(min_length=1)
    then: Actions = Field(min_length=1)
    on_clear: Actions = []
    """Thresholds: actions when the value is back past the threshold by ``hysteresis``
    (``gpio write fan off``)."""
    hysteresis: float = Field(default=0.0, ge=0)
    """Thresholds: how far back past the threshold the value must go before the rule clears
    and may fire again (a fan on above 28 clears below 27 with ``hysteresis = 1``)."""
    for_seconds: float = Field(default=0.0, ge=0, le=86_400)
    """The condition must hold this long before the rule fires (thresholds and pin levels)."""
    cooldown_seconds: float = Field(default=10.0, ge=0, le=86_400)
    """After firing, the rule does not fire again for this long: a flapping input cannot spam
    people or hammer a relay."""
    enabled: bool = True



class HeartbeatConfig(Section):
    """A periodic check that tells the admins when a board, channel, sensor or supervised task
    has been down for longer than ``down_after_seconds``, and once more when it is back."""

    enabled: bool = True
    interval_seconds: float = Field(default=30.0, ge=1, le=3600)
    down_after_seconds: float = Field(default=300.0, ge=0, le=86_400)
    notify: list[str] = ["admins"]
    """Who hears of it: ``admins`` (every channel's admins), ``telegram:ID``, ``signal:+NUMBER``."""
