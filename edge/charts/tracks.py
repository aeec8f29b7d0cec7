"""The outputs drawn beneath a sensor's chart: which pins the rules on that sensor switch, and any
other that switched in the chart's span, unless the person names them; and when each was on,
from the audit trail (:mod:`edge.audit`).

A rule is "on" a sensor when its ``when`` is that sensor's threshold (``greenhouse.temperature
> 28``); the outputs are the pins its ``then`` and ``on_clear`` write or set a duty on. A pin is
on from an ``ok`` outcome that left it on (read back, else asked: a write, the safe level, an
auto-off, a duty above zero) until one that left it off; refused and failed actuations change
nothing and are marked where they happened.

>>> from edge.config.rules import RuleConfig
>>> rules = [RuleConfig(name="fan", when="greenhouse.temperature > 28", then="gpio write fan on",
...                     on_clear="gpio write fan off"),
...          RuleConfig(name="mist", when="greenhouse.humidity < 40", then="gpio pwm mister 0.5"),
...          RuleConfig(name="door", when="door pressed", then="notify door!")]
>>> rule_outputs(rules, "greenhouse")
['fan', 'mister']
>>> from edge.core.actuation import Actuation
>>> records = [Actuation(at=t, board="gpio", pin="GPIO18", label="fan", action="write",
...                      asked=v, read_back=v, outcome=o)
...            for t, v, o in [(50.0, 1.0, "ok"), (120.0, 0.0, "ok"), (150.0, 1.0, "refused")]]
>>> track_from_records("fan", records, since=100.0, until=200.0)
OutputTrack(label='fan', on=((100.0, 120.0),), refusals=(150.0,))
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from edge.audit import outputs_switched, read_history
from edge.automation.actions import PinAction, parse_action
from edge.config.rules import RuleConfig
from edge.core.actuation import Actuation

LOOKBACK_SECONDS = 7 * 86400.0
"""How far before the window the trail is read to know whether an output was on at its start."""
MAX_RECORDS = 20_000
"""Records of one output read for one chart at most (the newest kept)."""
SWITCHING = ("write", "pwm", "safe", "auto-off", "safe-state", "trip")
"""Actions that leave a pin on or off (a servo's angle and a remote call do not)."""


@dataclass(frozen=True)
class OutputTrack:
    label: str
    """The output as the rules name it (``fan``)."""
    on: tuple[tuple[float, float], ...]
    """When it was on: ``[start, end)`` in Unix seconds, clipped to the chart's window."""
    refusals: tuple[float, ...] = ()
    """When an actuation of it was refused or failed (Unix seconds, in the window)."""


def rule_outputs(rules: Iterable[RuleConfig], sensor: str) -> list[str]:
    """The pins that the rules on ``sensor``'s thresholds write or set a duty on, in the order
    the rules name them (an action that does not parse is left to ``config check`` to report)."""
    found: list[str] = []
    for rule in rules:
        if not rule.when.strip().startswith(f"{sensor}."):
            continue
        for text in [*rule.then, *rule.on_clear]:
            try:
                action = parse_action(text)
            except ValueError:
                continue
            if isinstance(action, PinAction) and action.verb != "servo" and action.pin not in found:
                found.append(action.pin)
    return found


def _leaves_on(record: Actuation) -> bool:
    value = record.read_back if record.read_back is not None else record.asked
    if value is None:
        return False
    return value > 0.0 if record.action == "pwm" else value >= 0.5


def track_from_records(label: str, records: Sequence[Actuation], *, since: float,
                       until: float) -> OutputTrack:
    """The track of one output from its records (oldest first), including those before
    ``since`` that say whether it was on when the window opened."""
    periods: list[tuple[float, float]] = []
    refusals: list[float] = []
    on_since: float | None = None
    for record in records:
        if record.at > until:
            break
        if record.outcome != "ok":
            if record.at >= since:
                refusals.append(record.at)
            continue
        if record.action not in SWITCHING:
            continue
        if _leaves_on(record):
            if on_since is None:
                on_since = max(record.at, since)
        elif on_since is not None:
            if record.at > since:
                periods.append((on_since, record.at))
            on_since = None
    if on_since is not None:
        periods.append((on_since, until))
    return OutputTrack(label, tuple(periods), tuple(refusals))


def read_tracks(audit_path: Path, outputs: Iterable[str], *, since: float,
                until: float) -> list[OutputTrack]:
    """One track per output from the audit file (blocking: SQLite, read-only)."""
    return [track_from_records(label, read_history(audit_path, label, since=since - LOOKBACK_SECONDS,
                                                   limit=MAX_RECORDS),
                               since=since, until=until)
            for label in outputs]


def chart_outputs(rules: Iterable[RuleConfig], sensor: str, audit_path: Path, *, since: float,
                  until: float) -> list[str]:
    """The outputs a chart of ``sensor`` shows by default: those the rules on it switch, then
    every other output that switched in ``[since, until)`` (a pump a schedule runs is no rule's
    on the sensor, and its runs were missing), each once whichever name it goes by (blocking)."""
    chosen = rule_outputs(rules, sensor)
    for board, pin, label in outputs_switched(audit_path, SWITCHING, since=since, until=until):
        names = {pin.lower(), f"{board}:{pin}".lower(), label.lower()} - {""}
        if not names & {name.lower() for name in chosen}:
            chosen.append(label or pin)
    return chosen


async def output_tracks(rules: Iterable[RuleConfig], sensor: str, audit_path: Path, *,
                        since: float, until: float,
                        outputs: Sequence[str] | None = None) -> list[OutputTrack]:
    """The tracks of ``outputs`` (pin names or aliases), read in a thread; None: those of
    :func:`chart_outputs`."""
    def read() -> list[OutputTrack]:
        chosen = (list(outputs) if outputs is not None
                  else chart_outputs(rules, sensor, audit_path, since=since, until=until))
        return read_tracks(audit_path, chosen, since=since, until=until) if chosen else []

    return await asyncio.to_thread(read)
