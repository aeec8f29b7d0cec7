"""The chat spellings of the catalog's operations (``/gpio PIN on|off``, ``/schedule add ...``):
each turns the words after the command into the operation's arguments (:class:`Chat`), and
:mod:`edge.agent.commands` answers them and lists them in ``/help``.

>>> GPIO_WRITE.parse(["led", "ON"])
{'pin': 'led', 'value': 'on'}
>>> GPIO_WRITE.parse(["led"]) is None
True
"""

from __future__ import annotations

from typing import Any

from edge.ops.operation import Chat


def _nothing(words: list[str]) -> dict[str, Any]:
    return {}


def _one_pin(words: list[str]) -> dict[str, Any] | None:
    return {"pin": words[0]} if len(words) == 1 else None


def _pin_level(words: list[str]) -> dict[str, Any] | None:
    if len(words) == 2 and words[1].lower() in ("on", "off"):
        return {"pin": words[0], "value": words[1].lower()}
    return None


PWM_USAGE = "Usage: /pwm PIN DUTY [HZ]  (duty 0..1)"


def _pwm(words: list[str]) -> dict[str, Any] | None:
    if len(words) not in (2, 3):
        return None
    try:
        numbers = [float(word) for word in words[1:]]
    except ValueError:
        raise ValueError("Usage: /pwm PIN DUTY [HZ]  (duty and frequency are numbers)") from None
    call: dict[str, Any] = {"pin": words[0], "duty": numbers[0]}
    if len(numbers) == 2:
        call["frequency"] = numbers[1]
    return call


def _servo(words: list[str]) -> dict[str, Any] | None:
    try:
        return {"pin": words[0], "angle": float(words[1])}
    except (IndexError, ValueError):
        return None


def _sensors(words: list[str]) -> dict[str, Any]:
    return {"name": words[0]} if words else {}


SCHEDULE_USAGE = ("Usage: /schedule list | /schedule add NAME cron M H DOM MON DOW ACTION | "
                  "/schedule add NAME every 10m ACTION | /schedule add NAME at 2026-12-01 06:00 "
                  "ACTION | /schedule remove NAME")


def parse_schedule_add(args: list[str]) -> dict[str, str]:
    """``/schedule add`` words as the ``schedule_add`` tool's arguments.

    >>> parse_schedule_add("water cron 0 6 * * * gpio write pump on for 30s".split())["cron"]
    '0 6 * * *'
    >>> parse_schedule_add("vet at 2026-12-01 06:00 notify call the vet".split())["at"]
    '2026-12-01 06:00'
    """
    if len(args) < 4:
        raise ValueError(SCHEDULE_USAGE)
    name, kind, rest = args[0], args[1].lower(), args[2:]
    if kind == "cron" and len(rest) > 5:
        when, rest = " ".join(rest[:5]), rest[5:]
    elif kind == "every":
        when, rest = rest[0], rest[1:]
    elif kind == "at":
        taken = 2 if len(rest) > 2 and ":" in rest[1] and "T" not in rest[0] else 1
        when, rest = " ".join(rest[:taken]), rest[taken:]
    else:
        raise ValueError(SCHEDULE_USAGE)
    if not rest:
        raise ValueError(SCHEDULE_USAGE)
    return {"name": name, kind: when, "action": " ".join(rest)}


def _schedule_list(words: list[str]) -> dict[str, Any] | None:
    return {} if not words or words[0].lower() == "list" else None


def _schedule_add(words: list[str]) -> dict[str, Any] | None:
    return parse_schedule_add(words[1:]) if words and words[0].lower() == "add" else None


def _schedule_remove(words: list[str]) -> dict[str, Any] | None:
    if len(words) == 2 and words[0].lower() == "remove":
        return {"name": words[1]}
    return None


PINS = Chat("/pins", "allowlisted pins and their state", _nothing)
GPIO_READ = Chat("/gpio PIN", "read a pin (name or alias, e.g. led, GPIO17)", _one_pin,
                 menu="read or switch a pin: /gpio led on")
GPIO_WRITE = Chat("/gpio PIN on|off", "switch an output pin", _pin_level)
PWM = Chat("/pwm PIN DUTY [HZ]", "set a PWM pin's duty cycle 0..1, optionally its frequency", _pwm,
           wrong=PWM_USAGE, menu="set PWM duty: /pwm fan 0.5")
SERVO = Chat("/servo PIN ANGLE", "turn a servo (Arduino D9/D10, a pwm pin) to 0..180 degrees",
             _servo, wrong="Usage: /servo PIN ANGLE  (angle 0..180)",
             menu="turn a servo: /servo arm 90")
SENSORS = Chat("/sensors [NAME]", "sensor readings (temperature, humidity, the Pi's health...)",
               _sensors, menu="sensor readings")
RULES = Chat("/rules", "automation rules and what they did", _nothing, menu="automation rules")
INTERLOCKS = Chat("/interlocks", "interlocks: what the pins refuse and when, and any tripped",
                  _nothing, menu="interlocks and their state")
SCHEDULES = Chat("/schedule [list]", "scheduled jobs, when they run next", _schedule_list,
                 wrong=SCHEDULE_USAGE, aliases=("schedules",),
                 menu="list, add or remove scheduled jobs")
SCHEDULE_ADD = Chat("/schedule add NAME cron M H DOM MON DOW ACTION | every 10m ACTION | at "
                    "2026-12-01 06:00 ACTION",
                    "add a job (admins), e.g. /schedule add water cron 0 6 * * * gpio write pump "
                    "on for 30s", _schedule_add, aliases=("schedules",))
SCHEDULE_REMOVE = Chat("/schedule remove NAME", "remove a job added at runtime (admins)",
                       _schedule_remove, aliases=("schedules",))
