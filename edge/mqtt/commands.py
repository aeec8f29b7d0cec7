"""Commands from ``<base>/<pin>/set``: the payload read for the pin's kind, then carried out
through the hardware's one door (allowlist, modes, rate limits, approvals, max-on timers).

>>> parse_command("switch", b"on")
Command(action='write', value=1.0)
>>> parse_command("light", b"40")
Command(action='pwm', value=0.4)
>>> parse_command("servo", b"ninety")
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


def _number(text: str, low: float, high: float, what: str) -> float:
    try:
        number = float(text)
    except ValueError:
        number = math.nan
    if not (low <= number <= high):  # NaN fails too
        raise BadPayload(f"{what}, not {shown(text)}")
    return number


def shown(text: str) -> str:
    """A payload as quoted in refusals and logs: repr, cut to a line."""
    return repr(text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS] + "...")


def parse_command(kind: str, payload: bytes) -> Command:
    """What ``payload`` asks of a pin of ``kind`` (see :mod:`edge.mqtt.topics`)."""
    try:
        text = payload.decode("utf-8").strip()
    except UnicodeDecodeError:
        raise BadPayload("the payload is not UTF-8 text") from None
    word = text.lower()
    if kind == "servo":
        return Command("servo", _number(text, 0, 180, "a servo takes an angle from 0 to 180 degrees"))
    if word in ON or word in OFF:
        if kind == "light" and word in ("0", "1"):
            return Command("pwm", float(word) / 100)
        return Command("write", 1.0 if word in ON else 0.0)
    if kind == "light":
        percent = _number(text, 0, 100, "a PWM pin takes ON, OFF or a duty from 0 to 100 (percent)")
        return Command("pwm", round(percent / 100, 4))
    raise BadPayload(f"this pin takes ON or OFF, not {shown(text)}")


async def carry_out(hardware: Hardware, spec: str, command: Command, requester: Requester) -> None:
    """Ask the hardware for ``command`` on ``spec``; its refusals are raised as they come
    (PolicyDenied, UnknownPin, BoardError)."""
    if command.action == "servo":
        await hardware.servo(spec, command.value, requester)
    elif command.action == "pwm":
        await hardware.pwm(spec, command.value, None, requester)
    else:
        await hardware.write(spec, command.value > 0, requester)
