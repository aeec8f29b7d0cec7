"""``[[interlocks]]`` enforced at the one door to the pins (:class:`~edge.hardware.Hardware`):
whoever asks (chat, the model, ``edge-cli``, MQTT, rules, schedules), an actuation that would break
an interlock is refused with :class:`InterlockRefused`, naming it::

    pump: refused by interlock dry-run (tank_low is on)

and when a condition becomes true while a guarded output is in the forbidden state (the tank runs
low, a board drops off, a sensor fails), the output is driven to its safe level at once through
the door's ``make_safe`` (as caller ``interlock:NAME``), logged (``interlock_tripped``) and told
to the admins once, until it clears.

Conditions use the rules' grammar (:func:`edge.automation.rules.parse_when`): ``PIN on|off``
(any allowlisted pin, output or input; an input is on while it is active, its switch closed:
:func:`edge.hardware.pins.input_active_low`), ``SENSOR.QUANTITY < VALUE`` and ``board NAME down``. The
unknown counts as true (fail safe): a sensor that is failing, has no reading yet, or whose
reading is older than three of its intervals; a board that is down; a pin whose level cannot be
read. Going to the safe level is never refused. ``exclusive`` and ``at_most`` count the outputs
that are on now (what the boards report, 1 is on whatever the wiring), and one whose level is
unknown (its board down or not saying) as on.

The door runs :meth:`Interlocks.check` and the switch it allows as one step against every other
switch of the outputs the same interlock sees (:meth:`Interlocks.scopes`, :mod:`edge.hardware.atomic`),
so two callers at once never both pass. Outputs on a fleet node are not allowed in an interlock
here: a check on this Pi and a switch on another cannot be one step (declare it on the node).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from edge.automation.notify import ChannelNotifier
from edge.automation.rules import BoardTrigger, ThresholdTrigger, parse_when
from edge.config.interlocks import InterlockConfig
from edge.config.loader import invalid_config
from edge.core.exc import ConfigError, PolicyDenied
from edge.core.requester import Requester
from edge.core.validation import Problem
from edge.hardware import Hardware
from edge.hardware.pins import Pin, wiring
from edge.sensors import SensorHub
from peripherals.base import PinMode
from peripherals.exc import BoardError, UnknownPin

log = logging.getLogger(__name__)

STALE_INTERVALS = 3
"""A reading older than this many of its sensor's intervals is unknown (and so counts as true)."""
RECHECK_SECONDS = 1.0
"""How often a resident agent looks again without an event (a sensor going stale says nothing)."""


class InterlockKeyError(ConfigError):
    """A problem with one key of an interlock (``forbid``, ``while``, ``exclusive``, ``of``);
    collected with the config's other problems and told at once."""

    def __init__(self, key: str, message: str):
        super().__init__(message)
        self.key = key


@contextlib.contextmanager
def _at(key: str) -> Iterator[None]:
    """A ValueError (or a BoardError: a pin the board does not have) inside is about ``key``."""
    try:
        yield
    except (ValueError, BoardError) as exc:
        raise InterlockKeyError(key, str(exc)) from None


class InterlockRefused(PolicyDenied):
    """An interlock refused an actuation; the message names the pin, the interlock and why."""


@dataclass(frozen=True)
class PinLevel:
    """``PIN on|off``: the pin's logical level (1 is on, whatever the wiring)."""

    board: str
    pin: str
    name: str
    on: bool


Condition = PinLevel | ThresholdTrigger | BoardTrigger


@dataclass(frozen=True)
class Interlock:
    name: str
    shape: str
    target: Pin | None = None
    """forbid: the output and the state refused (``forbid_on``) while ``condition`` holds."""
    forbid_on: bool = True
    condition: Condition | None = None
    group: tuple[Pin, ...] = ()
    limit: int = 0

    def describe(self) -> str:
        if self.target is not None and self.condition is not None:
            return (f"forbid {pin_name(self.target)} {'on' if self.forbid_on else 'off'} "
                    f"while {describe(self.condition)}")
        names = ", ".join(pin_name(p) for p in self.group)
        return f"exclusive {names}" if self.shape == "exclusive" else \
            f"at most {self.limit} of {names}"


def pin_name(rule: Pin) -> str:
    """What the config calls the pin: its first alias, else the pin."""
    return rule.aliases[0] if rule.aliases else rule.pin


def describe(condition: Condition) -> str:
    if isinstance(condition, PinLevel):
        return f"{condition.name} {'on' if condition.on else 'off'}"
    if isinstance(condition, ThresholdTrigger):
        return f"{condition.sensor}.{condition.quantity} {condition.op} {condition.threshold:g}"
    return f"board {condition.board} {condition.kind}"


class Interlocks:
    """The interlocks of one config, checked against ``hardware`` and ``sensors`` at
    construction, then asked by the door before each change (:meth:`check`) and, in a resident
    agent, watching for trips (:meth:`run`). Each problem goes to ``problems`` at its key
    (``interlocks.0.forbid``) and its interlock is left out; without a list, a ConfigError names
    every problem at once."""

    def __init__(self, configs: list[InterlockConfig], hardware: Hardware, sensors: SensorHub,
                 *, clock: Callable[[], float] = time.time, problems: list[Problem] | None = None):
        self.hardware, self.sensors, self.clock = hardware, sensors, clock
        self.notifier: ChannelNotifier | None = None
        self.interlocks: list[Interlock] = []
        found: list[Problem] = [] if problems is None else problems
        start = len(found)
        for index, config in enumerate(configs):
            try:
                self.interlocks.append(self._build(config))
            except InterlockKeyError as exc:
                found.append(Problem(("interlocks", index, exc.key), "value",
                                     f"interlock {config.name!r}: {exc}"))
        if problems is None and len(found) > start:
            raise invalid_config(found, "interlocks")
        self.tripped: dict[str, str] = {}
        """Interlock -> why, while a tripped one's condition holds (status, the admins told once)."""
        self._wake = asyncio.Event()

    # config ---------------------------------------------------------------------------------

    def _output(self, spec: str, what: str) -> Pin:
        try:
            rule = self.hardware.pins.get(self.hardware.locate(spec))
        except UnknownPin as exc:
            raise ValueError(f"{what}: {exc}") from None
        if rule is None:
            raise ValueError(f"{what}: {spec} is not in the allowlist")
        if rule.mode is PinMode.INPUT:
            raise ValueError(f"{what}: {spec} is an input; an interlock guards outputs (it can "
                             "watch an input in `while`)")
        self._local(rule, what)
        return rule

    def _local(self, rule: Pin, what: str) -> None:
        """An output on a fleet node cannot be switched as one step with a check made here."""
        if self.hardware.boards[rule.board].kind == "node":
            raise ValueError(f"{what}: {rule.label} is an output of the fleet node {rule.board}; "
                             "a check here and a switch there cannot be one step across the "
                             "broker, so declare this interlock on the node itself (its own "
                             "interlocks are atomic); a `while` here may still watch the node's "
                             "inputs and sensors")

    def _condition(self, text: str) -> Condition:
        words = text.split()
        if len(words) == 2 and words[1].lower() in ("on", "off"):
            try:
                board, pin = self.hardware.locate(words[0])
            except UnknownPin as exc:
                raise ValueError(f"while {text!r}: {exc}") from None
            rule = self.hardware.pins.get((board, pin))
            if rule is None:
                raise ValueError(f"while {text!r}: {board}:{pin} is not in the allowlist")
            if rule.mode is not PinMode.INPUT:
                self._local(rule, f"while {text!r}")
            return PinLevel(board, pin, words[0], words[1].lower() == "on")
        units = {name: tuple(quantities) for name, quantities in self.sensors.describe().items()}
        trigger = parse_when(text, self.hardware, units)
        if isinstance(trigger, BoardTrigger) and trigger.kind != "down":
            raise ValueError(f"while {text!r}: a board's condition is `board NAME down`")
        if not isinstance(trigger, ThresholdTrigger | BoardTrigger):
            raise ValueError(f"while {text!r}: write a pin state as `PIN on` or `PIN off`")
        return trigger

    def _build(self, config: InterlockConfig) -> Interlock:
        """The interlock ``config`` describes; a InterlockKeyError naming the key that is wrong."""
        if config.shape == "forbid":
            with _at("forbid"):
                words = (config.forbid or "").split()
                if len(words) != 2 or words[1].lower() not in ("on", "off"):
                    raise ValueError(f"forbid {config.forbid!r}: write `PIN on` or `PIN off`")
                target = self._output(words[0], f"forbid {config.forbid!r}")
                forbid_on = words[1].lower() == "on"
                if bool(target.safe) == forbid_on:
                    raise ValueError(f"forbid {config.forbid!r} contradicts the pin's safe level "
                                     f"({'on' if target.safe else 'off'}): the interlock would "
                                     "forbid the state it trips to")
            with _at("while"):
                condition = self._condition(config.while_ or "")
            return Interlock(config.name, "forbid", target, forbid_on, condition)
        with _at("exclusive" if config.shape == "exclusive" else "of"):
            group = tuple(self._output(spec, config.shape) for spec in config.group)
            if len({(p.board, p.pin) for p in group}) != len(group):
                raise ValueError(f"{config.shape}: names a pin twice")
            safe_on = [pin_name(p) for p in group if p.safe]
            if len(safe_on) > config.limit:
                raise ValueError(f"{', '.join(safe_on)} are on at their safe level: more than the "
                                 f"{config.limit} the interlock allows")
        return Interlock(config.name, config.shape, group=group, limit=config.limit)

    # the state of things ----------------------------------------------------------------------

    def _levels(self) -> tuple[dict[tuple[str, str], float], set[str]]:
        """Each claimed pin's logical value and the boards that are up."""
        levels: dict[tuple[str, str], float] = {}
        up = set()
        for status in self.hardware.status():
            if status.connected:
                up.add(status.name)
            for state in status.pins:
                levels[(status.name, state.name)] = state.value
        return levels, up

    def holds(self, condition: Condition, levels: dict[tuple[str, str], float],
              up: set[str]) -> str | None:
        """Why ``condition`` holds now (or counts as holding: the unknown), else None."""
        if isinstance(condition, BoardTrigger):
            return None if condition.board in up else f"board {condition.board} is down"
        if isinstance(condition, PinLevel):
            if condition.board not in up:
                return f"board {condition.board} is down"
            value = levels.get((condition.board, condition.pin))
            if value is None:
                return f"{condition.name} is unknown"
            on = bool(value)
            if on != condition.on:
                return None
            rule = self.hardware.pins.get((condition.board, condition.pin))
            words = wiring(rule, on) if rule is not None else None
            return f"{condition.name} is {'on' if on else 'off'}" + (f" ({words})" if words else "")
        state = self.sensors.sensors[condition.sensor]
        where = f"{condition.sensor}.{condition.quantity}"
        if state.error is not None:
            return f"{condition.sensor} is failing: {state.error}"
        reading = state.readings.get(condition.quantity)
        if reading is None or state.read_at is None:
            return f"{where} has no reading yet"
        age = self.clock() - state.read_at
        if age > STALE_INTERVALS * state.interval:
            return f"{where} is stale ({age:.0f} s old)"
        if condition.over(reading.value):
            return f"{where} is {reading.value:g} {condition.op} {condition.threshold:g}"
        return None

    # the door asks ---------------------------------------------------------------------------

    def check(self, rule: Pin, value: float) -> None:
        """Raise :class:`InterlockRefused` if setting ``rule`` to ``value`` (logical) would break
        an interlock; its safe level is always allowed."""
        on = bool(value)
        if on == bool(rule.safe):
            return
        key = (rule.board, rule.pin)
        snapshot: tuple[dict[tuple[str, str], float], set[str]] | None = None
        for lock in self.interlocks:
            if lock.target is not None and lock.condition is not None:
                if (lock.target.board, lock.target.pin) != key or lock.forbid_on != on:
                    continue
                snapshot = snapshot or self._levels()
                why = self.holds(lock.condition, *snapshot)
                if why:
                    raise InterlockRefused(f"{pin_name(rule)}: refused by interlock "
                                           f"{lock.name} ({why})")
            elif on and any((p.board, p.pin) == key for p in lock.group):
                snapshot = snapshot or self._levels()
                others = [(p, snapshot[0].get((p.board, p.pin))) for p in lock.group
                          if (p.board, p.pin) != key]
                counted = [(pin_name(p), value is None) for p, value in others if value != 0]
                if len(counted) + 1 > lock.limit:
                    raise InterlockRefused(f"{pin_name(rule)}: refused by interlock {lock.name} "
                                           f"({_counted(counted)})")

    def scopes(self) -> list[list[tuple[str, str]]]:
        """The outputs each interlock looks at together (its group; a ``forbid`` target and
        the output its ``while`` names): the door switches them one at a time, each check with
        the switch it allows (:mod:`edge.hardware.atomic`)."""
        found = []
        for lock in self.interlocks:
            pins = [(p.board, p.pin) for p in lock.group]
            if lock.target is not None:
                pins.append((lock.target.board, lock.target.pin))
            if isinstance(lock.condition, PinLevel) and self._is_output(lock.condition):
                pins.append((lock.condition.board, lock.condition.pin))
            found.append(pins)
        return found

    def _is_output(self, level: PinLevel) -> bool:
        rule = self.hardware.pins.get((level.board, level.pin))
        return rule is not None and rule.mode is not PinMode.INPUT

    # trips ------------------------------------------------------------------------------------

    def violations(self) -> list[tuple[Interlock, Pin, str]]:
        """(interlock, output to drive to safe, why) for each one broken right now."""
        levels, up = self._levels()
        found: list[tuple[Interlock, Pin, str]] = []
        for lock in self.interlocks:
            if lock.target is not None and lock.condition is not None:
                value = levels.get((lock.target.board, lock.target.pin))
                if value is None or bool(value) != lock.forbid_on:
                    continue
                why = self.holds(lock.condition, levels, up)
                if why:
                    found.append((lock, lock.target, why))
            else:
                on = [p for p in lock.group if levels.get((p.board, p.pin))]
                for extra in on[lock.limit:]:
                    names = ", ".join(pin_name(p) for p in on)
                    found.append((lock, extra, f"{names} are on"))
        return found

    async def enforce(self) -> None:
        """Drive each output that breaks an interlock to its safe level; tell the admins of a
        trip once, until its interlock clears."""
        broken = self.violations()
        for lock, rule, why in broken:
            try:
                await self.hardware.make_safe(f"{rule.board}:{rule.pin}",
                                              Requester("interlock", lock.name))
            except (PolicyDenied, BoardError) as exc:
                log.error("interlock_trip_failed interlock=%s board=%s pin=%s error=%r",
                          lock.name, rule.board, rule.pin, str(exc))
                continue
            log.warning("interlock_tripped interlock=%s board=%s pin=%s why=%r",
                        lock.name, rule.board, rule.pin, why)
            if lock.name not in self.tripped:
                self.tripped[lock.name] = why
                if self.notifier is not None:
                    await self.notifier.notify(("admins",), f"Interlock {lock.name} tripped: "
                                               f"{pin_name(rule)} driven to its safe level "
                                               f"({why})")
        for name in list(self.tripped):
            lock = next(i for i in self.interlocks if i.name == name)
            if lock.condition is not None and self.holds(lock.condition, *self._levels()):
                continue
            del self.tripped[name]
            log.info("interlock_cleared interlock=%s", name)

    def poke(self, *_: Any) -> None:
        """A board event or a sensor reading: look again (a listener for both)."""
        self._wake.set()

    async def run(self) -> None:
        """A resident agent's watch: look after every event and every ``RECHECK_SECONDS``."""
        while True:
            await self.enforce()
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(RECHECK_SECONDS):
                    await self._wake.wait()

    # listing ----------------------------------------------------------------------------------

    def rows(self) -> list[dict[str, Any]]:
        """Each interlock with its state now (``edge-cli interlocks``, ``/interlocks``, status)."""
        levels, up = self._levels()
        rows = []
        for lock in self.interlocks:
            why = self.holds(lock.condition, levels, up) if lock.condition is not None else None
            on = [pin_name(p) for p in lock.group if levels.get((p.board, p.pin))]
            rows.append({"name": lock.name, "shape": lock.shape, "rule": lock.describe(),
                         "active": why is not None if lock.condition is not None else None,
                         "why": why, "on": on if lock.group else None,
                         "tripped": self.tripped.get(lock.name)})
        return rows


def _counted(outputs: list[tuple[str, bool]]) -> str:
    """``heater is on``, ``valve1, valve2 are on``, ``valve1 is on, valve3 is unknown``."""
    on = [name for name, unknown in outputs if not unknown]
    unknown = [name for name, unknown in outputs if unknown]
    parts = [f"{', '.join(names)} {'is' if len(names) == 1 else 'are'} {state}"
             for names, state in ((on, "on"), (unknown, "unknown (counted as on)")) if names]
    return "; ".join(parts)

