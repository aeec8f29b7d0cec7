"""Durations as people write them in config and chat: ``30s``, ``10m``, ``1h30m``, ``2d``, ``1.5h``.

>>> parse_duration("1h30m"), parse_duration("90s"), parse_duration("0.5m")
(5400.0, 90.0, 30.0)
>>> format_duration(5400)
'1h30m'
>>> parse_duration("soon")
Traceback (most recent call last):
...
ValueError: 'soon' is not a duration; write it like 30s, 10m, 1h30m or 2d
"""

from __future__ import annotations

import re

UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_PART = re.compile(r"(\d+(?:\.\d+)?)([smhd])")
_WHOLE = re.compile(r"(?:\d+(?:\.\d+)?[smhd])+")


def parse_duration(text: str) -> float:
    """Seconds in ``text``; a bare number is seconds. Raises ValueError for anything else and for
    zero or negative durations."""
    spoken = str(text).strip().lower().replace(" ", "")
    try:
        seconds = float(spoken)
    except ValueError:
        if not _WHOLE.fullmatch(spoken):
            raise ValueError(f"{text!r} is not a duration; write it like 30s, 10m, 1h30m or 2d") \
                from None
        seconds = sum(float(n) * UNITS[unit] for n, unit in _PART.findall(spoken))
    if not seconds > 0:
        raise ValueError(f"{text!r}: a duration must be longer than zero")
    return seconds


def format_duration(seconds: float) -> str:
    """The shortest way to write ``seconds`` back (``5400`` -> ``1h30m``)."""
    rest, parts = round(seconds), []
    for unit in ("d", "h", "m", "s"):
        count, rest = divmod(rest, int(UNITS[unit]))
        if count:
            parts.append(f"{count}{unit}")
    return "".join(parts) or f"{seconds:g}s"
