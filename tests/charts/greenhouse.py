"""A week in a greenhouse, written where the agent keeps it: the temperature every minute into a
real history file (``readings.db``), with the sensor failing for two hours; and the fan the
``fan`` rule switches as it would have (on above 26 °C, off below 25 °C), recorded in a real
audit trail, with one refusal (an interlock). The values follow the day: 20 °C ± 8 °C."""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass, field
from pathlib import Path

from edge.audit import AUDIT_FILE, AuditTrail
from edge.core.actuation import Actuation
from edge.readings.store import Entry, ReadingStore

DAY = 86400.0
WEEK = 7 * DAY
EVERY = 60.0
FAILING = (6 * 3600.0, 4 * 3600.0)
"""The sensor failed from six hours ago until four hours ago (seconds before now)."""
REFUSED_AGO = 3 * 3600.0 + 600.0

RULES = """
[boards.gpio.aliases]
fan = "GPIO18"
[boards.gpio.pins]
fan = { mode = "output", safe = "off" }
[sensors.greenhouse]
type = "bme280"
bus = 99                 # no such bus: every read fails, and the history records it as a gap
interval_seconds = 3600
[[rules]]
name = "fan"
when = "greenhouse.temperature > 26"
then = "gpio write fan on"
on_clear = "gpio write fan off"
hysteresis = 1
"""


def temperature(at: float) -> float:
    """Warmest at 14:00 UTC, coldest at 02:00, with a slower wobble of clouds."""
    return (20.0 + 8.0 * math.cos(2 * math.pi * ((at - 14 * 3600) % DAY) / DAY)
            + 0.3 * math.sin(at / 1500.0))


@dataclass
class Week:
    now: float
    state_dir: Path
    fan_runs: list[tuple[float, float]] = field(default_factory=list)

    @property
    def failing(self) -> tuple[float, float]:
        return self.now - FAILING[0], self.now - FAILING[1]

    @property
    def refused_at(self) -> float:
        return self.now - REFUSED_AGO


async def write_week(state_dir: Path, now: float) -> Week:
    """The week before ``now`` into ``state_dir`` (the history file and the audit trail)."""
    week = Week(now, state_dir)
    start, stop = week.failing
    entries = []
    audit = AuditTrail(state_dir / AUDIT_FILE)
    on_since: float | None = None
    at = now - WEEK
    while at < now:
        value = None if start <= at < stop else temperature(at)
        entries.append(Entry("greenhouse", "temperature", "°C", at, value))
        if value is not None and on_since is None and value > 26:
            on_since = at
            await audit.record(_fan(at, 1.0))
        elif value is not None and on_since is not None and value < 25:
            week.fan_runs.append((on_since, at))
            on_since = None
            await audit.record(_fan(at, 0.0))
        at += EVERY
    if on_since is not None:
        week.fan_runs.append((on_since, now))
    await audit.record(Actuation(at=week.refused_at, board="gpio", pin="GPIO18", label="fan",
                                 action="write", asked=1.0, outcome="refused",
                                 reason="interlock heat-or-cool", caller="telegram:42",
                                 door="telegram"))
    audit.close()
    store = ReadingStore.in_state_dir(state_dir)
    await store.write(entries)
    await store.close()
    return week


def _fan(at: float, value: float) -> Actuation:
    return Actuation(at=at, board="gpio", pin="GPIO18", label="fan", action="write", asked=value,
                     read_back=value, caller="rule:fan", door="rule", why="fan")


def week_in(state_dir: Path, now: float) -> Week:
    return asyncio.run(write_week(state_dir, now))


async def write_station(state_dir: Path, now: float, quantities: int) -> list[str]:
    """A weather station reading ``quantities`` quantities (``q00``, ``q01``...) every minute for
    the day before ``now``, into the history file; their names."""
    names = [f"q{i:02d}" for i in range(quantities)]
    entries = [Entry("station", name, "u", now - DAY + minute * EVERY,
                     temperature(now - DAY + minute * EVERY) + i)
               for i, name in enumerate(names) for minute in range(int(DAY / EVERY))]
    store = ReadingStore.in_state_dir(state_dir)
    await store.write(entries)
    await store.close()
    return names
