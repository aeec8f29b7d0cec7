"""Durations as people write them in config and chat: ``30s``, ``10m``, ``1h30m``, ``2d``, ``1.5h``.

Every duration that comes from outside (the config file, chat, the model's tools, ``edge-cli``)
is finite, longer than zero (or at least a floor, 1 s for a schedule's ``every``) and at most
:data:`MAX_SECONDS` (10 years): ``inf``, ``nan``, ``1e300`` and ``99999999999d`` are refused here,
in one place, before any timer, ``timedelta`` or datetime sees them and overflows.

>>> parse_duration("1h30m"), parse_duration("90s"), parse_duration("0.5m")
(5400.0, 90.0, 30.0)
>>> format_duration(5400), format_duration(93784), format_duration(93784, most=2)
('1h30m', '1d2h3m4s', '1d2h')
>>> parse_duration("soon")
Traceback (most recent call last):
...
ValueError: 'soon' is not a duration; write it like 30s, 10m, 1h30m or 2d
>>> parse_duration("1e-9", at_least=1)
Traceback (most recent call last):
...
ValueError: must be at least 1s (got '1e-9')
>>> parse_duration("99999999999d")
Traceback (most recent call last):
...
ValueError: must be at most 3650d, 10 years (got '99999999999d')
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_PART = re.compile(r"(\d+(?:\.\d+)?)([smhd])")
_WHOLE = re.compile(r"(?:\d+(?:\.\d+)?[smhd])+")

MAX_SECONDS = 3650 * 86400.0
"""The longest duration anything takes: 10 years. Longer is a typo (or a hostile value), and far
past it ``timedelta``, datetimes and timers overflow."""


def parse_duration(text: str, *, at_least: float | None = None, at_most: float = MAX_SECONDS) -> float:
    """Seconds in ``text``; a bare number is seconds. Raises ValueError for anything else, and
    for a duration :func:`check_seconds` refuses (zero or less, below ``at_least``, above
    ``at_most``, not finite)."""
    spoken = str(text).strip().lower().replace(" ", "")
    try:
        seconds = float(spoken)
    except ValueError:
        if not _WHOLE.fullmatch(spoken):
            raise ValueError(f"{text!r} is not a duration; write it like 30s, 10m, 1h30m or 2d") \
                from None
        seconds = sum(float(n) * UNITS[unit] for n, unit in _PART.findall(spoken))
    return check_seconds(seconds, at_least=at_least, at_most=at_most, given=text)


def check_seconds(seconds: float, *, at_least: float | None = None, at_most: float = MAX_SECONDS,
                  given: object = None) -> float:
    """``seconds`` when it is a finite duration longer than zero (at least ``at_least`` when
    given) and at most ``at_most``; a ValueError saying which bound and what was ``given``
    (the text as written; default the number) otherwise. The message has no key: the caller's
    error names it (``schedules.0.every: must be at least 1s (got '1e-9')``).

    >>> check_seconds(float("inf"))
    Traceback (most recent call last):
    ...
    ValueError: must be a finite duration, at most 3650d, 10 years (got inf)
    """
    shown = repr(seconds if given is None else given)
    if not math.isfinite(seconds):
        raise ValueError(f"must be a finite duration, at most {_written(at_most)} (got {shown})")
    if at_least is None and not seconds > 0:
        raise ValueError(f"must be longer than zero (got {shown})")
    if at_least is not None and seconds < at_least:
        raise ValueError(f"must be at least {_written(at_least)} (got {shown})")
    if seconds > at_most:
        raise ValueError(f"must be at most {_written(at_most)} (got {shown})")
    return seconds


def counted_in(unit: str = "s") -> Callable[[float | None], float | None]:
    """A check for a config number counted in ``unit`` (``s``, ``m``, ``h``): finite and at
    most 10 years (its lower bound is the field's own), None passing as None. Config sections
    use it as ``After(counted_in("m"))``.

    >>> counted_in("h")(12.0), counted_in("m")(None)
    (12.0, None)
    >>> counted_in("m")(1e300)
    Traceback (most recent call last):
    ...
    ValueError: must be at most 5256000 (3650d, 10 years) (got 1e+300)
    """
    scale = UNITS[unit]

    def check(value: float | None) -> float | None:
        if value is None or (math.isfinite(value) and value * scale <= MAX_SECONDS):
            return value
        finite = "" if math.isfinite(value) else "finite, "
        raise ValueError(f"must be {finite}at most {MAX_SECONDS / scale:.10g} "
                         f"({_written(MAX_SECONDS)}) (got {value!r})")
    return check


def _written(seconds: float) -> str:
    return format_duration(seconds) + (", 10 years" if seconds == MAX_SECONDS else "")


def format_duration(seconds: float, most: int = 4) -> str:
    """The shortest way to write ``seconds`` back (``5400`` -> ``1h30m``), as
    :func:`parse_duration` reads it: a duration as config and commands write it (``hold for
    1.5s``), to the millisecond; with ``most``, only that many of the largest units (``1d2h``).
    A span told to a person (an uptime, how long something was down) is
    :func:`edge.status.span`'s ``2 min 5 s``.

    >>> format_duration(1.5), format_duration(2.5), format_duration(90.25), format_duration(0.0029)
    ('1.5s', '2.5s', '1m30.25s', '0.003s')
    """
    if not math.isfinite(seconds) or round(seconds, 3) <= 0:
        return f"{seconds:g}s"
    rest, fraction = divmod(round(seconds, 3), 1.0)
    parts = list[tuple[float, str]]()
    for unit in ("d", "h", "m", "s"):
        count, rest = divmod(rest, UNITS[unit])
        if count or parts:
            parts.append((count, unit))
    if fraction:
        parts = parts[:-1] + [(parts[-1][0] + fraction, "s")] if parts else [(fraction, "s")]
    shown = [f"{round(count, 3):g}{unit}" for count, unit in parts[:most] if count]
    return "".join(shown)
