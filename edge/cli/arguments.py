"""Argument types the commands share. Each refuses a value that could never work with
argparse's usage error, so the command exits 2 (with ``--json``, as one JSON object) before it
does anything.

>>> whole_number(at_least=1)("3")
3
>>> positive_seconds("2.5")
2.5
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

MAX_WAIT_SECONDS = 3600.0
"""The longest a command waits for a board or a broker to answer."""


def whole_number(at_least: int) -> Callable[[str], int]:
    """A whole number of ``at_least`` or more (``-n``, ``--baud``)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < at_least:
            raise argparse.ArgumentTypeError(f"{value}: give {at_least} or more")
        return value

    return parse


def seconds_up_to(limit: float) -> Callable[[str], float]:
    """A number of seconds above 0 and at most ``limit`` (``--timeout``, ``--hold``)."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
        if not (math.isfinite(value) and 0 < value <= limit):
            raise argparse.ArgumentTypeError(
                f"{text} s: give a number of seconds above 0 and at most {limit:g}")
        return value

    return parse


positive_seconds = seconds_up_to(MAX_WAIT_SECONDS)
"""A wait in seconds: above 0, at most an hour (``--timeout``)."""
