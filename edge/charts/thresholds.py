"""The rules' thresholds drawn on a sensor's chart: for each rule in ``[rules]`` whose ``when``
watches a quantity of the charted sensor, the threshold as a line and its hysteresis band (where
the rule, once fired, stays on until it clears) shaded, labelled with the rule's name.

>>> from edge.config.rules import RuleConfig
>>> rules = [RuleConfig(name="fan", when="greenhouse.temperature > 28", then="gpio write fan on",
...                     hysteresis=1.5),
...          RuleConfig(name="mist", when="greenhouse.humidity < 40", then="gpio write mister on"),
...          RuleConfig(name="door", when="door pressed", then="notify door!")]
>>> [(t.rule, t.quantity, t.threshold, t.band) for t in rule_thresholds(rules, "greenhouse")]
[('fan', 'temperature', 28.0, (26.5, 28.0)), ('mist', 'humidity', 40.0, (40.0, 40.0))]
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from edge.automation.rules import threshold_of
from edge.config.rules import RuleConfig


@dataclass(frozen=True)
class RuleThreshold:
    rule: str
    """The rule's name, the line's label."""
    quantity: str
    op: str
    threshold: float
    band: tuple[float, float]
    """Threshold and where the rule clears (``threshold ± hysteresis``, the way the rule works),
    low first; both the threshold when the rule has no hysteresis."""

    @property
    def label(self) -> str:
        return f"{self.rule} ({self.op} {self.threshold:g})"


def rule_thresholds(rules: Iterable[RuleConfig], sensor: str) -> list[RuleThreshold]:
    """The thresholds the enabled rules watch on ``sensor``, in the order of the rules."""
    found = []
    for rule in rules:
        trigger = threshold_of(rule.when) if rule.enabled else None
        if trigger is not None and trigger.sensor == sensor:
            found.append(RuleThreshold(rule.name, trigger.quantity, trigger.op, trigger.threshold,
                                       trigger.band(rule.hysteresis)))
    return found
