"""What rules and schedules do, written as text in config and chat, parsed once, checked against
the boards and the policy before the agent starts, and run through the one door to the pins as
caller ``rule:NAME`` or ``schedule:NAME``.

Actions (``PIN`` is a name, an alias or ``board:pin``, as everywhere else):

- ``gpio write PIN on|off [for DURATION]``: with ``for``, the pin is switched back after that long
  (at most 10 years; ``for inf`` is refused, so a hold always ends)
- ``gpio pwm PIN DUTY [for DURATION]`` (duty 0..1) and ``gpio servo PIN ANGLE`` (0..180)
- ``gpio safe PIN``: back to its safe level
- ``sensor read NAME``: take a reading now (it is logged and reaches the rules)
- ``notify [to TARGET,...] TEXT``: a message to ``admins`` (default), ``telegram:ID``,
  ``signal:+NUMBER``, or every admin of ``telegram`` / ``signal``; ``{rule}``, ``{value}``,
  ``{pin}``, ``{board}``, ``{sensor}``, ``{event}`` and ``{time}`` are filled in
- ``prompt TEXT``: run the agent on TEXT in the rule's own session (the event in context) and
  send its reply to the admins

>>> parse_action("gpio write pump on for 30s")
PinAction(verb='write', pin='pump', value=1.0, hold=30.0)
>>> parse_action("notify to telegram:42 Door {event}")
NotifyAction(targets=('telegram:42',), message='Door {event}')
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from edge.core.durations import format_duration, parse_duration
from edge.core.exc import EdgeError
from edge.core.requester import Requester
from edge.hardware import Hardware
from edge.security.policy import Action as PolicyAction
from peripherals.exc import BoardError

log = logging.getLogger(__name__)

VERBS = {"write": PolicyAction.WRITE, "pwm": PolicyAction.PWM, "servo": PolicyAction.SERVO,
         "safe": PolicyAction.SAFE}
USAGE = ("an action is one of: gpio write PIN on|off [for 30s]; gpio pwm PIN DUTY [for 10m]; "
         "gpio servo PIN ANGLE; gpio safe PIN; sensor read NAME; notify [to admins|telegram:ID|"
         "signal:+NUMBER] TEXT; prompt TEXT")


@dataclass(frozen=True)
class PinAction:
    verb: str
    """``write``, ``pwm``, ``servo`` or ``safe``."""
    pin: str
    value: float = 0.0
    """1/0 for write, the duty for pwm, the angle for servo."""
    hold: float | None = None
    """Seconds after which the pin is switched back (``for 30s``)."""

    def __str__(self) -> str:
        shown = {"write": "on" if self.value else "off", "pwm": f"{self.value:g}",
                 "servo": f"{self.value:g}", "safe": ""}[self.verb]
        held = f" for {format_duration(self.hold)}" if self.hold else ""
        return f"gpio {self.verb} {self.pin} {shown}".rstrip() + held


@dataclass(frozen=True)
class NotifyAction:
    targets: tuple[str, ...]
    message: str

    def __str__(self) -> str:
        return f"notify to {','.join(self.targets)} {self.message}"


@dataclass(frozen=True)
class PromptAction:
    prompt: str

    def __str__(self) -> str:
        return f"prompt {self.prompt}"


@dataclass(frozen=True)
class SensorReadAction:
    sensor: str

    def __str__(self) -> str:
        return f"sensor read {self.sensor}"


AutomationAction = PinAction | NotifyAction | PromptAction | SensorReadAction


def parse_action(text: str) -> AutomationAction:
    """The action ``text`` describes; ValueError (saying what is accepted) otherwise."""
    words = str(text).split()
    head = [w.lower() for w in words[:2]]
    if head[:1] == ["gpio"] and len(words) >= 3 and head[1] in VERBS:
        return _pin_action(head[1], words[2], words[3:], text)
    if head == ["sensor", "read"] and len(words) == 3:
        return SensorReadAction(words[2])
    if head[:1] == ["notify"]:
        rest = words[1:]
        targets: tuple[str, ...] = ("admins",)
        if rest[:1] == ["to"] and len(rest) >= 2:
            targets = tuple(t for t in rest[1].split(",") if t)
            rest = rest[2:]
        message = str(text).split(None, len(words) - len(rest))[-1] if rest else ""
        if not message.strip():
            raise ValueError(f"{text!r}: notify needs the text to send")
        return NotifyAction(targets, message.strip())
    if head[:1] == ["prompt"] and len(words) >= 2:
        return PromptAction(str(text).split(None, 1)[1].strip())
    raise ValueError(f"{text!r} is not an action; {USAGE}")


def _pin_action(verb: str, pin: str, args: list[str], text: str) -> PinAction:
    hold = None
    if len(args) >= 2 and args[-2].lower() == "for":
        try:
            hold = parse_duration(args[-1])  # finite and at most 10 years: a hold always ends
        except ValueError as exc:
            raise ValueError(f"{text!r}: 'for': {exc}") from None
        args = args[:-2]
        if verb in ("servo", "safe"):
            raise ValueError(f"{text!r}: 'for' applies to gpio write and gpio pwm")
    if verb == "safe":
        if args:
            raise ValueError(f"{text!r}: gpio safe takes only the pin")
        return PinAction("safe", pin)
    if len(args) != 1:
        raise ValueError(f"{text!r}: {USAGE}")
    word = args[0].lower()
    if verb == "write":
        if word not in ("on", "off"):
            raise ValueError(f"{text!r}: gpio write takes on or off, not {args[0]!r}")
        return PinAction("write", pin, 1.0 if word == "on" else 0.0, hold)
    try:
        value = float(word)
    except ValueError:
        raise ValueError(f"{text!r}: {args[0]!r} is not a number") from None
    low, high = (0.0, 1.0) if verb == "pwm" else (0.0, 180.0)
    if not low <= value <= high:
        raise ValueError(f"{text!r}: {'duty' if verb == 'pwm' else 'angle'} must be between "
                         f"{low:g} and {high:g}")
    return PinAction(verb, pin, value, hold)


# checks before the agent starts -----------------------------------------------------------------

@dataclass(frozen=True)
class Surroundings:
    """What an action may name, known before anything runs: the hardware (pins and the policy),
    the sensors' quantities, the channels that can carry a notice, whether a model exists, and
    each board's servo pins (its type's spec says: :attr:`peripherals.base.BoardSpec.servo_pins`;
    none when not given)."""

    hardware: Hardware
    sensors: Mapping[str, tuple[str, ...]]
    channels: frozenset[str]
    has_model: bool
    servo_pins: Mapping[str, frozenset[str]] = field(default_factory=dict)
    servos_declared: frozenset[str] = frozenset()
    """The boards whose servos are declared in their section (the Pi header's)."""


def _natural(name: str) -> tuple[str, int]:
    """``D9`` before ``D10``."""
    head = name.rstrip("0123456789")
    return head, int(name[len(head):] or 0)


def servo_refusal(board: str, pin: str, servo_pins: Mapping[str, frozenset[str]],
                  declared: frozenset[str] = frozenset()) -> str | None:
    """Why a hobby servo can never run on ``board:pin`` (the board cannot drive one there, or
    on a board in ``declared``, whose servos are declared in its section, the pin is not
    declared as one), and where one can; None when it can.

    >>> servo_refusal("uno", "D3", {"gpio": frozenset(), "uno": frozenset({"D9"})})[:58]
    'uno:D3 cannot drive a servo (board uno drives them on D9 o'
    >>> servo_refusal("gpio", "GPIO18", {"gpio": frozenset()}, frozenset({"gpio"}))[:62]
    'gpio:GPIO18 is not declared as a servo; add [boards.gpio.servo'
    >>> servo_refusal("uno", "D9", {"uno": frozenset({"D9", "D10"})}) is None
    True
    """
    pins = servo_pins.get(board, frozenset())
    if pin in pins:
        return None
    if board in declared:
        return (f"{board}:{pin} is not declared as a servo; add [boards.{board}.servos.{pin}] "
                "(its angle range and pulse widths; {} takes the defaults)")
    here = (f"board {board} drives none" if not pins else
            f"board {board} drives them on {' and '.join(sorted(pins, key=_natural))} only")
    elsewhere = [f"{name}:{p}" for name, found in servo_pins.items() for p in sorted(found, key=_natural)]
    fix = (f"wire the servo to one that can ({', '.join(elsewhere)}), allowlisted with "
           'mode = "pwm"' if elsewhere else
           "none of the configured boards drives servos; an Arduino does, on D9 and D10, and "
           "the Pi header on a pin declared in [boards.NAME.servos]")
    return f"{board}:{pin} cannot drive a servo ({here}); {fix}"


def check_action(action: AutomationAction, where: Surroundings) -> None:
    """ValueError when ``action`` could never be carried out as written: an unknown pin or
    sensor, a pin the policy forbids it, a servo where the board cannot drive one, a notice to
    a channel that is not configured."""
    if isinstance(action, PinAction):
        board, pin = where.hardware.locate(action.pin)  # raises UnknownPin
        refusal = where.hardware.refusal(board, pin, VERBS[action.verb])
        if refusal is None and action.verb == "servo":
            refusal = servo_refusal(board, pin, where.servo_pins, where.servos_declared)
        if refusal:
            raise ValueError(f"{action}: {refusal}")
        if action.hold and action.value:  # the door's one check for every hold
            refusal = where.hardware.hold_refusal(f"{board}:{pin}", action.hold,
                                                  advice="for {limit:g}s")
            if refusal:
                raise ValueError(f"{action}: {refusal}")
    elif isinstance(action, SensorReadAction):
        if action.sensor not in where.sensors:
            known = ", ".join(sorted(where.sensors)) or "none configured"
            raise ValueError(f"{action}: no sensor {action.sensor!r} (sensors: {known})")
    elif isinstance(action, NotifyAction):
        for target in action.targets:
            channel = target.partition(":")[0]
            if target != "admins" and channel not in where.channels:
                raise ValueError(f"{action}: channel {channel!r} is not configured (configured: "
                                 f"{', '.join(sorted(where.channels)) or 'none'})")
    elif isinstance(action, PromptAction) and not where.has_model:
        raise ValueError(f"{action}: no model is configured; set [provider] or use direct actions")


# running -----------------------------------------------------------------------------------------

class Notifier(Protocol):
    async def notify(self, targets: Iterable[str], text: str) -> int:
        """Send ``text`` to ``targets`` (see :class:`NotifyAction`); the number delivered."""
        ...


class PromptRunner(Protocol):
    async def prompt(self, text: str, requester: Requester) -> str:
        """The agent's reply to ``text`` in the session of ``requester`` (``rule:NAME``)."""
        ...


class SensorReader(Protocol):
    async def read_now(self, name: str) -> str:
        """Read sensor ``name`` at once; the reading as text."""
        ...


class ActionFailed(EdgeError):
    """An action that could not be carried out (a board down, nobody to notify)."""


class ActionRunner:
    """Carries out actions for rules and schedules. Pin actions go through :class:`Hardware`
    (policy, rate limits, approvals, ``max_on_seconds``); a ``for`` hold is a timer per pin that
    a newer action on the same pin replaces."""

    def __init__(self, hardware: Hardware, notifier: Notifier, prompts: PromptRunner | None = None,
                 sensors: SensorReader | None = None,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep):
        """``sleep``: how a ``for`` hold waits (the automation's clock)."""
        self.hardware, self.notifier, self.prompts, self.sensors = hardware, notifier, prompts, sensors
        self._sleep = sleep
        self._holds: dict[tuple[str, str], asyncio.Task[None]] = {}

    async def run(self, action: AutomationAction, requester: Requester,
                  context: Mapping[str, object]) -> str:
        """What was done, as text; raises PolicyDenied, BoardError or ActionFailed."""
        if isinstance(action, PinAction):
            return await self._pin(action, requester)
        if isinstance(action, NotifyAction):
            text = fill(action.message, context)
            sent = await self.notifier.notify(action.targets, text)
            if not sent:
                raise ActionFailed(f"nobody to notify for {','.join(action.targets)}: configure "
                                   "admins ([channels.telegram] admins) or name a recipient")
            return f"notified {sent}"
        if isinstance(action, PromptAction):
            if self.prompts is None:
                raise ActionFailed("no model is configured to run the prompt")
            facts = ", ".join(f"{k}={v}" for k, v in context.items() if v not in (None, ""))
            reply = await self.prompts.prompt(f"{action.prompt}\n\n(automation: {facts})", requester)
            await self.notifier.notify(("admins",), reply)
            return "prompted"
        if self.sensors is None:
            raise ActionFailed("no sensors are running")
        return await self.sensors.read_now(action.sensor)

    async def _pin(self, action: PinAction, requester: Requester) -> str:
        hw = self.hardware
        if action.verb == "write":
            rule = await hw.write(action.pin, bool(action.value), requester)
        elif action.verb == "pwm":
            rule = await hw.pwm(action.pin, action.value, None, requester)
        elif action.verb == "servo":
            rule = await hw.servo(action.pin, action.value, requester)
        else:
            rule = await hw.make_safe(action.pin, requester)
        key = (rule.board, rule.pin)
        previous = self._holds.pop(key, None)
        if previous is not None:
            previous.cancel()
        if action.hold:
            self._holds[key] = asyncio.create_task(self._release(action, requester, key),
                                                   name=f"hold-{rule.board}:{rule.pin}")
        return str(action)

    async def _release(self, action: PinAction, requester: Requester,
                       key: tuple[str, str]) -> None:
        """After ``for``: the opposite write (or duty 0); if that is refused (a rate limit),
        the safe level, which the policy never refuses on an allowlisted output."""
        await self._sleep(action.hold or 0.0)
        self._holds.pop(key, None)
        spec = f"{key[0]}:{key[1]}"
        try:
            try:
                if action.verb == "pwm":
                    await self.hardware.pwm(spec, 0.0, None, requester)
                else:
                    await self.hardware.write(spec, not action.value, requester)
            except EdgeError:
                await self.hardware.make_safe(spec, requester)
            log.info("hold_ended pin=%s after=%gs by=%s", spec, action.hold, requester.caller)
        except (EdgeError, BoardError) as exc:
            log.error("hold_end_failed pin=%s by=%s error=%r", spec, requester.caller, str(exc))

    async def aclose(self) -> None:
        """Cancel pending holds (shutdown then walks every output to its safe level)."""
        for task in self._holds.values():
            task.cancel()
        await asyncio.gather(*self._holds.values(), return_exceptions=True)
        self._holds.clear()


_FIELD = re.compile(r"(?P<space> ?)\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)\}")


def fill(template: str, context: Mapping[str, object]) -> str:
    """``template`` with ``{value}`` etc. filled in. Only plain names are filled (no attribute or
    index lookups, no format specs); anything else, unknown names included, stays as written. A
    field that fills in empty takes the space before it along (no double space where a sensor
    has no unit). ``{time}`` is the context's (a schedule's: the time the job was due), else now.

    >>> fill("{sensor} at {value} {unit}, {nope}, {value.__class__}", {"sensor": "greenhouse",
    ...      "value": 28.4, "unit": "°C"})
    'greenhouse at 28.4 °C, {nope}, {value.__class__}'
    >>> fill("{sensor} at {value} {unit} now", {"sensor": "pot", "value": 0.5, "unit": ""})
    'pot at 0.5 now'
    """
    values = {k: "" if v is None else str(v) for k, v in context.items()}
    values.setdefault("time", time.strftime("%Y-%m-%d %H:%M"))

    def one(match: re.Match[str]) -> str:
        value = values.get(match.group("name"))
        if value is None:
            return match.group(0)
        return match.group("space") + value if value else ""

    return _FIELD.sub(one, template).strip()
