"""Commands from ``<base>/<pin>/set``: the payload read by the pin's entity kind
(:func:`edge.mqtt.entities.parse_command`), then carried out through the hardware's one door
(allowlist, modes, rate limits, approvals, max-on timers).

>>> number("40", 0, 100, "a duty from 0 to 100")
40.0
>>> number("ninety", 0, 180, "a servo takes an angle from 0 to 180 degrees")
Traceback (most recent call last):
...
edge.mqtt.commands.BadPayload: a servo takes an angle from 0 to 180 degrees, not 'ninety'
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from edge.core.exc import EdgeError
from edge.core.requester import Requester
from edge.hardware import Hardware

ON = frozenset({"on", "true", "1"})
OFF = frozenset({"off", "false", "0"})
SHOWN_CHARS = 80


class BadPayload(EdgeError, ValueError):
    """A command payload that means nothing for its pin; the message says what it takes."""


@dataclass(frozen=True)
class Command:
    action: Literal["write", "pwm", "servo"]
    value: float


def number(text: str, low: float, high: float, what: str) -> float:
    """``text`` as a number from ``low`` to ``high``; BadPayload saying ``what`` it must be."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (low <= value <= high):  # NaN fails too
        raise BadPayload(f"{what}, not {shown(text)}")
    return value


def shown(text: str) -> str:
    """A payload as quoted in refusals and logs: repr, cut to a line."""
    return repr(text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS] + "...")


async def carry_out(hardware: Hardware, spec: str, command: Command, requester: Requester) -> None:
    """Ask the hardware for ``command`` on ``spec``; its refusals are raised as they come
    (PolicyDenied, UnknownPin, BoardError)."""
    if command.action == "servo":
        await hardware.servo(spec, command.value, requester)
    elif command.action == "pwm":
        await hardware.pwm(spec, command.value, None, requester)
    else:
        await hardware.write(spec, command.value > 0, requester)
