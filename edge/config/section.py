"""The base of every config section (unknown keys are errors; defaults are validated too), on a
floor below the schema so that section modules (sensors, schedules, rules, mqtt) and the
``Config`` model that gathers them import it without a cycle."""

from __future__ import annotations

import re
from typing import Annotated

from edge.durations import counted_in
from edge.records import After, Record

NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,63}")

Seconds = Annotated[float, After(counted_in("s"))]
"""A duration key counted in seconds (``timeout_seconds``): finite and at most 10 years; its
``Field`` gives the lower bound. ``inf`` and ``1e300`` are refused with the key."""
Minutes = Annotated[float, After(counted_in("m"))]
Hours = Annotated[float, After(counted_in("h"))]


class Section(Record):
    """A config section: unknown keys are errors, defaults are checked too (records do both)."""


def check_name(value: str, what: str = "", why: str = "") -> str:
    """A name people write and that shows up in callers, logs and commands (a rule, a schedule,
    a sensor): letters, digits, ``_`` and ``-``, starting with a letter.

    >>> check_name("greenhouse-1")
    'greenhouse-1'
    """
    if not NAME.fullmatch(value):
        raise ValueError(f"{what + ' ' if what else ''}{value!r}: use letters, digits, '_' and '-', "
                         f"starting with a letter (at most 64 characters){why}")
    return value
