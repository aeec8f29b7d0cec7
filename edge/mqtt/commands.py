"""Commands from ``<base>/<pin>/set``: the payload read by the pin's entity kind
(:mod:`edge.mqtt.entities`), then carried out through the hardware's one door (allowlist, modes,
rate limits, approvals, max-on timers).

>>> from edge.mqtt.entities import KINDS
>>> parse_command(KINDS["switch"], b"on")
Command(action='write', value=1.0)
>>> parse_command(KINDS["light"], b"40")
Command(action='pwm', value=0.4)
>>> parse_command(KINDS["servo"], b"ninety")
Traceback (most recent call last):
...
edge.mqtt.commands.BadPayload: a servo takes an angle from 0 to 180 degrees, not 'ninety'
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from edge.core.exc import EdgeError
from edge.core.requester import Requester
from edge.hardware import Hardware

if TYPE_CHECKING:
    from edge.mqtt.entities import EntityKind

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


def parse_command(kind: EntityKind, payload: bytes) -> Command:
    """What ``payload`` asks of a pin of ``kind``."""
    try:
        text = payload.decode("utf-8").strip()
    except UnicodeDecodeError:
        raise BadPayload("the payload is not UTF-8 text") from None
    return kind.command(text)


async def carry_out(hardware: Hardware, spec: str, command: Command, requester: Requester) -> None:
    """Ask the hardware for ``command`` on ``spec``; its refusals are raised as they come
    (PolicyDenied, UnknownPin, BoardError)."""
    if command.action == "servo":
        await hardware.servo(spec, command.value, requester)
    elif command.action == "pwm":
        await hardware.pwm(spec, command.value, None, requester)
    else:
        await hardware.write(spec, command.value > 0, requester)
