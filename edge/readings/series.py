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
class Summary:
    """The figures of a series: the lowest and highest value with when (the bucket's start:
    within ``step`` of the moment), the mean of every good reading, how many there were, and
    the gaps (buckets with no good reading, of which ``failing`` had failed reads)."""

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

    def as_dict(self) -> dict[str, Any]:
        return {"count": self.count, "low": self.low, "low_at": self.low_at, "high": self.high,
                "high_at": self.high_at, "mean": self.mean, "last": self.last,
                "last_at": self.last_at, "gaps": self.gaps, "failing": self.failing}


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
        last = good[-1]
        return Summary(count, lowest.low, lowest.start, highest.high, highest.start,
                       total / count if count else None, last.mean, last.start, len(gaps), failing)

    def as_dict(self) -> dict[str, Any]:
        """The series for ``--json`` and the tools: its figures, its summary and its buckets."""
        return {"sensor": self.sensor, "quantity": self.quantity, "unit": self.unit,
                "since": self.since, "until": self.until, "step": self.step,
                "summary": self.summary().as_dict(),
                "buckets": [b.as_dict() for b in self.buckets]}
