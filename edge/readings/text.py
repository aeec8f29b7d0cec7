"""A history in words (``edge-cli sensors history``, the ``sensor_history`` tool) and as CSV.

>>> from edge.readings.series import Bucket, Series
>>> s = Series("shed", "temperature", "°C", 0.0, 600.0, 300.0, (
...     Bucket(0.0, 300.0, 18.0, 19.0, 20.5, 10), Bucket(300.0, 600.0, None, None, None, 0, 10)))
>>> print(series_csv([s]), end="")
sensor,quantity,unit,start,end,low,mean,high,count,failures
shed,temperature,°C,1970-01-01T00:00:00Z,1970-01-01T00:05:00Z,18,19,20.5,10,0
shed,temperature,°C,1970-01-01T00:05:00Z,1970-01-01T00:10:00Z,,,,0,10
"""

from __future__ import annotations

import csv
import io
import time
from collections.abc import Callable, Sequence
from functools import partial

from edge.core.durations import format_duration
from edge.readings.series import Bucket, Series

CSV_COLUMNS = ("sensor", "quantity", "unit", "start", "end", "low", "mean", "high", "count",
               "failures")


def local(moment: float | None, fmt: str = "%Y-%m-%d %H:%M") -> str:
    return "-" if moment is None else time.strftime(fmt, time.localtime(moment))


def to_the_second(moment: float | None) -> str:
    """A reading's own time: ``2026-11-26 01:59:12``."""
    return local(moment, "%Y-%m-%d %H:%M:%S")


def _iso(moment: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(moment))


def _number(value: float | None, digits: int = 4) -> str:
    return "" if value is None else f"{value:.{digits}g}"


def summary_text(series: Series) -> str:
    """``shed temperature (°C) 2026-11-25 11:00 .. 2026-11-26 11:00: low 12.1 at ..., high
    28.3 at ..., mean 18.9 over 2880 readings, last ...``, and the gaps; the lowest, highest and
    last are readings with their own times, to the second (older than the raw tier's 48 hours:
    the start of their 5-minute or hourly row, to the minute)."""
    s = series.summary()
    unit = f" ({series.unit})" if series.unit else ""
    head = f"{series.sensor} {series.quantity}{unit} {local(series.since)} .. {local(series.until)}"
    if not s.count:
        failing = " (the sensor was failing)" if s.failing else ""
        return f"{head}: no readings{failing}"
    at = to_the_second if s.exact else local
    line = (f"{head}: low {_number(s.low)} at {at(s.low_at)}, high {_number(s.high)} at "
            f"{at(s.high_at)}, mean {_number(s.mean)} over {s.count} readings, last "
            f"{_number(s.last)} at {to_the_second(s.last_at)}")
    if s.gaps:
        what = "readings" if series.step == 0 else f"{format_duration(series.step)} buckets"
        line += (f"; {s.gaps} {what} without a reading ({s.failing} with the sensor failing, "
                 "the rest with nothing recorded)")
    return line


def _clock(fmt: str, moment: float) -> str:
    return time.strftime(fmt, time.localtime(moment))


def _point(bucket: Bucket, step: float, when: Callable[[float], str]) -> str:
    if bucket.mean is None:
        return f"{when(bucket.start)} {'failing' if bucket.failures else 'none'}"
    if step == 0 or bucket.low == bucket.high:
        return f"{when(bucket.start)} {_number(bucket.mean)}"
    return (f"{when(bucket.start)} {_number(bucket.low)}/{_number(bucket.mean)}/"
            f"{_number(bucket.high)}")


def series_text(series: Sequence[Series], *, points: bool = True) -> str:
    """Each series' summary, then its points (``HH:MM low/mean/high`` per bucket, or the raw
    values at ``HH:MM:SS``), with the day when the span is longer than one, the seconds for raw
    readings and when the span is at most two hours."""
    if not series:
        return "No history recorded."
    parts = []
    for one in series:
        parts.append(summary_text(one))
        if points and one.buckets:
            length = one.until - one.since
            fmt = "%m-%d %H:%M" if length > 86400 else "%H:%M" if length > 7200 else "%H:%M:%S"
            if one.step == 0 and not fmt.endswith("%S"):
                fmt += ":%S"  # raw readings a few seconds apart are told apart
            step = "raw readings" if one.step == 0 else f"per {format_duration(one.step)} (low/mean/high)"
            shown = [_point(b, one.step, partial(_clock, fmt)) for b in one.buckets]
            parts.append(f"  {step}: " + ", ".join(shown))
    return "\n".join(parts)


def series_csv(series: Sequence[Series]) -> str:
    """Every bucket as a CSV row (UTC times; a gap has empty values)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for one in series:
        for b in one.buckets:
            writer.writerow([one.sensor, one.quantity, one.unit, _iso(b.start), _iso(b.end),
                             _number(b.low, 10), _number(b.mean, 10), _number(b.high, 10), b.count,
                             b.failures])
    return out.getvalue()


def series_from_dict(raw: dict[str, object]) -> Series:
    """A series back from :meth:`Series.as_dict` (the control socket's JSON)."""
    buckets = raw.get("buckets")
    rows = buckets if isinstance(buckets, list) else []
    return Series(str(raw["sensor"]), str(raw["quantity"]), str(raw["unit"]),
                  float(raw["since"]), float(raw["until"]), float(raw["step"]),  # type: ignore[arg-type]
                  tuple(Bucket(**row) for row in rows))
