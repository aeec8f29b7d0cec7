"""What the sensor history hands out: a :class:`Series` of one sensor's quantity over a span of
time, as :class:`Bucket` s (raw readings, or minimum/mean/maximum per bucket), and its
:class:`Summary` (how warm it got, and when).

A bucket with no good reading is a gap (``low``, ``mean`` and ``high`` are None): ``failures``
says how many reads failed in it (the sensor was failing), and none at all means nothing was
recorded then (the agent was not running). A chart draws both as gaps, never a line across.

>>> s = Series("greenhouse", "temperature", "°C", 0.0, 900.0, 300.0, (
...     Bucket(0.0, 300.0, 18.0, 19.0, 20.5, 10),
...     Bucket(300.0, 600.0, None, None, None, 0, failures=10),
...     Bucket(600.0, 900.0, 17.0, 17.5, 18.0, 10)))
>>> summary = s.summary()
>>> summary.high, summary.high_at, summary.low, summary.mean, summary.gaps
(20.5, 0.0, 17.0, 18.25, 1)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Bucket:
    start: float
    """Unix seconds; for a raw reading, when it was taken."""
    end: float
    """The bucket is ``[start, end)``; a raw reading's ``end`` is its ``start``."""
    low: float | None
    """None: no good reading in the bucket, a gap (the sensor failing, or nothing recorded)."""
    mean: float | None
    high: float | None
    count: int
    """Good readings aggregated (1 for a raw reading, 0 for a gap)."""
    failures: int = 0
    """Reads that failed in the bucket (a raw failed read: 1, with no values)."""

    @property
    def gap(self) -> bool:
        return self.mean is None

    def as_dict(self) -> dict[str, Any]:
        return {"start": self.start, "end": self.end, "low": self.low, "mean": self.mean,
                "high": self.high, "count": self.count, "failures": self.failures}


@dataclass(frozen=True)
class Extremes:
    """A span's lowest, highest, first and last good reading, each with its own time, read from
    the history's rows (:mod:`edge.readings.extremes`), not from the buckets drawn."""

    low: float
    low_at: float
    high: float
    high_at: float
    last: float
    last_at: float
    first_at: float
    """When the first good reading in the span was taken (a new install's history starts late)."""
    exact: bool
    """True: readings with their times to the second (the raw tier); False: the lowest and
    highest of the tier's 5-minute or hourly rows, at their row's start (older spans)."""


@dataclass(frozen=True)
class Summary:
    """The figures of a series: the lowest, highest and last reading with when (to the second
    when ``exact``; else the start of its 5-minute or hourly row, or of its bucket), the mean of
    every good reading, how many there were, and the gaps (buckets with no good reading, of
    which ``failing`` had failed reads)."""

    count: int
    low: float | None
    low_at: float | None
    high: float | None
    high_at: float | None
    mean: float | None
    last: float | None
    """The newest good value in the series, and when (``last_at``)."""
    last_at: float | None
    gaps: int
    failing: int
    first_at: float | None = None
    """When the first good reading in the span was taken."""
    exact: bool = False
    """``low_at``, ``high_at`` and ``last_at`` are the readings' own times."""

    def as_dict(self) -> dict[str, Any]:
        return {"count": self.count, "low": self.low, "low_at": self.low_at, "high": self.high,
                "high_at": self.high_at, "mean": self.mean, "last": self.last,
                "last_at": self.last_at, "gaps": self.gaps, "failing": self.failing,
                "first_at": self.first_at, "exact": self.exact}


@dataclass(frozen=True)
class Series:
    sensor: str
    quantity: str
    unit: str
    since: float
    until: float
    step: float
    """Bucket width in seconds; 0: each bucket is one raw reading (or one failed read)."""
    buckets: tuple[Bucket, ...]
    extremes: Extremes | None = None
    """The span's readings with their times, from the history's rows (the store sets them);
    None: the summary reads them off the buckets."""

    def summary(self) -> Summary:
        good = [b for b in self.buckets if b.mean is not None]
        gaps = [b for b in self.buckets if b.mean is None]
        failing = sum(1 for b in gaps if b.failures)
        if not good:
            return Summary(0, None, None, None, None, None, None, None, len(gaps), failing)
        lowest = min(good, key=lambda b: b.low if b.low is not None else b.mean or 0.0)
        highest = max(good, key=lambda b: b.high if b.high is not None else b.mean or 0.0)
        count = sum(b.count for b in good)
        total = sum((b.mean or 0.0) * b.count for b in good)
        mean = total / count if count else None
        if (x := self.extremes) is not None:
            return Summary(count, x.low, x.low_at, x.high, x.high_at, mean, x.last, x.last_at,
                           len(gaps), failing, x.first_at, x.exact)
        last = good[-1]
        return Summary(count, lowest.low, lowest.start, highest.high, highest.start, mean,
                       last.mean, last.start, len(gaps), failing, good[0].start, self.step == 0)

    def as_dict(self) -> dict[str, Any]:
        """The series for ``--json`` and the tools: its figures, its summary and its buckets."""
        return {"sensor": self.sensor, "quantity": self.quantity, "unit": self.unit,
                "since": self.since, "until": self.until, "step": self.step,
                "summary": self.summary().as_dict(),
                "buckets": [b.as_dict() for b in self.buckets]}
