"""The moments a history is asked for, as people write them: ``24h`` (that long ago), an ISO
time (``2026-11-25T18:00``, local unless it names its zone), or ``now``.

>>> parse_moment("12h", now=100_000.0)
56800.0
>>> parse_moment("1970-01-02T00:00:00+00:00", now=0.0)
86400.0
>>> parse_moment("yesterday", now=0.0)
Traceback (most recent call last):
...
ValueError: 'yesterday' is neither a duration ago (24h, 7d, 90m) nor a time (2026-11-25T18:00)
>>> parse_moment("99999d", now=0.0)
Traceback (most recent call last):
...
ValueError: '99999d' ago: must be at most 3650d, 10 years (got '99999d')
"""

from __future__ import annotations

from datetime import datetime

from edge.core.durations import UNITS, parse_duration

DEFAULT_SINCE = "24h"


def parse_moment(text: str, *, now: float) -> float:
    """Unix seconds of ``text``: a duration before ``now``, an ISO 8601 time, or ``now``."""
    spoken = text.strip()
    if spoken.lower() == "now":
        return now
    try:
        return now - parse_duration(spoken)
    except ValueError as refused:
        if spoken[:1].isdigit() and spoken[-1:].lower() in UNITS:  # a duration, out of bounds
            raise ValueError(f"{text!r} ago: {refused}") from None
    try:
        moment = datetime.fromisoformat(spoken)
    except ValueError:
        raise ValueError(f"{text!r} is neither a duration ago (24h, 7d, 90m) nor a time "
                         "(2026-11-25T18:00)") from None
    if moment.tzinfo is None:
        moment = moment.astimezone()  # local, as people mean it
    return moment.timestamp()


def span(since: str | None, until: str | None, *, now: float) -> tuple[float, float]:
    """``(since, until)`` as Unix seconds (since defaults to 24 h ago, until to now); a
    ValueError when either is unreadable or since is not before until."""
    start = parse_moment(since or DEFAULT_SINCE, now=now)
    end = parse_moment(until, now=now) if until else now
    if start >= end:
        raise ValueError(f"since ({since or DEFAULT_SINCE}) must be before until "
                         f"({until or 'now'})")
    return start, end
