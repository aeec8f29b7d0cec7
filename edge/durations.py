"""Durations as people write them in config and chat: ``30s``, ``10m``, ``1h30m``, ``2d``, ``1.5h``.

>>> parse_duration("1h30m"), parse_duration("90s"), parse_duration("0.5m")
(5400.0, 90.0, 30.0)
>>> format_duration(5400), format_duration(93784), format_duration(93784, most=2)
('1h30m', '1d2h3m4s', '1d2h')
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


def format_duration(seconds: float, most: int = 4) -> str:
    """The shortest way to write ``seconds`` back (``5400`` -> ``1h30m``), as
    :func:`parse_duration` reads it; with ``most``, only that many of the largest units (an uptime,
    how long something has been down: ``1d2h``)."""
    rest, parts = round(seconds), list[tuple[int, str]]()
    for unit in ("d", "h", "m", "s"):
        count, rest = divmod(rest, int(UNITS[unit]))
        if count or parts:
            parts.append((count, unit))
    shown = [f"{count}{unit}" for count, unit in parts[:most] if count]
    return "".join(shown) or f"{seconds:g}s"
