"""When a rule fires: its trigger (a pin event, a board event, a sensor threshold) and the state
that keeps it from flapping (``for_seconds``, ``hysteresis``, ``cooldown_seconds``).

``when`` is one of:

- ``PIN pressed|released|on|off|rising|falling|changes``: an input pin (name, alias or
  ``board:pin``). ``on`` (or ``pressed``): the input becomes active, its switch closes (a low
  line with ``pull = "up"``, the default; high with ``"down"``; its ``active`` level without a
  pull: :func:`edge.hardware.pins.input_active_low`); ``off`` (or ``released``): back;
  ``rising``/``falling``: the electrical line, whatever the wiring;
- ``board NAME down|up|watchdog``: a board dropping off, coming back, or its firmware watchdog
  putting the outputs at their safe levels;
- ``SENSOR.QUANTITY > VALUE`` (also ``>=``, ``<``, ``<=``): a sensor reading crossing a threshold.

The classes here decide, from what happens and the time, whether a rule fires; they do no I/O.

>>> t = ThresholdTrigger("greenhouse", "temperature", ">", 28.0)
>>> state = RuleState(hysteresis=1.0, for_seconds=0.0, cooldown_seconds=0.0)
>>> [state.on_reading(t, v, now) for now, v in enumerate([27.0, 28.5, 28.2, 27.5, 26.9, 28.1])]
[None, 'fire', None, None, 'clear', 'fire']
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from edge.hardware import Hardware
from peripherals.base import BoardEvent, PinMode
from peripherals.exc import UnknownPin

PIN_EDGES = {"pressed": "on", "on": "on", "released": "off", "off": "off",
             "rising": "rising", "falling": "falling", "changes": "changes"}
BOARD_KINDS = ("down", "up", "watchdog")
OPERATORS: dict[str, Callable[[float, float], bool]] = {
    ">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le}
_THRESHOLD = re.compile(r"\s*([A-Za-z][\w-]*)\.(\w+)\s*(>=|<=|>|<)\s*(-?\d+(?:\.\d+)?)\s*")
USAGE = ("write `when` as PIN pressed|released|on|off|rising|falling|changes, "
         "board NAME down|up|watchdog, or SENSOR.QUANTITY > VALUE (>=, <, <= too)")


@dataclass(frozen=True)
class PinTrigger:
    board: str
    pin: str
    edge: str
    """``on``/``off`` (logical: active or not), ``rising``/``falling`` (the line), ``changes``."""
    active_low: bool = False

    def matches(self, event: BoardEvent) -> bool:
        if event.kind != "input" or event.board != self.board or event.pin != self.pin:
            return False
        on = bool(event.value)
        line = on != self.active_low
        return {"on": on, "off": not on, "rising": line, "falling": not line,
                "changes": True}[self.edge]

    def holds(self, value: float) -> bool:
        """The level this trigger waits for still holds (``for_seconds`` on a pin)."""
        return self.matches(BoardEvent(self.board, "input", self.pin, value))


@dataclass(frozen=True)
class BoardTrigger:
    board: str
    kind: str

    def matches(self, event: BoardEvent) -> bool:
        return event.board == self.board and event.kind == self.kind


@dataclass(frozen=True)
class ThresholdTrigger:
    sensor: str
    quantity: str
    op: str
    threshold: float

    def over(self, value: float) -> bool:
        return OPERATORS[self.op](value, self.threshold)

    def cleared(self, value: float, hysteresis: float) -> bool:
        """Back past the threshold by ``hysteresis`` (below 27 for ``> 28`` with 1)."""
        if self.op in (">", ">="):
            return value < self.threshold - hysteresis
        return value > self.threshold + hysteresis

    def band(self, hysteresis: float) -> tuple[float, float]:
        """Where the rule, once fired, stays on: between the threshold and where it clears
        (27 to 28 for ``> 28`` with 1; 40 to 41.5 for ``< 40`` with 1.5)."""
        if self.op in (">", ">="):
            return self.threshold - hysteresis, self.threshold
        return self.threshold, self.threshold + hysteresis


Trigger = PinTrigger | BoardTrigger | ThresholdTrigger


def threshold_of(text: str) -> ThresholdTrigger | None:
    """The sensor threshold ``text`` watches, not checked against the config (a chart draws
    it), or None when ``text`` watches no threshold.

    >>> threshold_of("greenhouse.temperature >= 28.5")
    ThresholdTrigger(sensor='greenhouse', quantity='temperature', op='>=', threshold=28.5)
    >>> threshold_of("door pressed") is None
    True
    """
    found = _THRESHOLD.fullmatch(text)
    if found is None:
        return None
    sensor, quantity, op, value = found.groups()
    return ThresholdTrigger(sensor, quantity, op, float(value))


def parse_when(text: str, hardware: Hardware, sensors: Mapping[str, tuple[str, ...]]) -> Trigger:
    """The trigger ``text`` describes, checked against the pins and sensors; ValueError saying
    what is wrong otherwise."""
    threshold = threshold_of(text)
    if threshold is not None:
        sensor, quantity = threshold.sensor, threshold.quantity
        if sensor not in sensors:
            known = ", ".join(sorted(sensors)) or "none configured"
            raise ValueError(f"{text!r}: no sensor {sensor!r} (sensors: {known})")
        if quantity not in sensors[sensor]:
            raise ValueError(f"{text!r}: sensor {sensor} has no {quantity!r} (it reads: "
                             f"{', '.join(sensors[sensor])})")
        return threshold
    words = text.split()
    if len(words) == 3 and words[0].lower() == "board":
        name, kind = words[1], words[2].lower()
        if name not in hardware.boards:
            raise ValueError(f"{text!r}: no board {name!r} (boards: {', '.join(hardware.boards)})")
        if kind not in BOARD_KINDS:
            raise ValueError(f"{text!r}: a board event is one of {', '.join(BOARD_KINDS)}")
        return BoardTrigger(name, kind)
    if len(words) == 2 and words[1].lower() in PIN_EDGES:
        try:
            board, pin = hardware.locate(words[0])
        except UnknownPin as exc:
            raise ValueError(f"{text!r}: {exc}") from None
        watched = hardware.pins.get((board, pin))
        if watched is None or watched.mode is not PinMode.INPUT:
            what = "not in the allowlist" if watched is None else f"a {watched.mode.value} pin"
            raise ValueError(f"{text!r}: {board}:{pin} is {what}; a rule can watch allowlisted "
                             "input pins (mode = \"input\")")
        return PinTrigger(board, pin, PIN_EDGES[words[1].lower()], watched.active_low)
    raise ValueError(f"{text!r} is not a trigger; {USAGE}")


class RuleState:
    """One rule's memory: whether a threshold is active, since when its condition holds, when it
    last fired, and what was held back. Times are seconds on one monotonic clock."""

    def __init__(self, *, hysteresis: float, for_seconds: float, cooldown_seconds: float):
        self.hysteresis, self.for_seconds, self.cooldown = hysteresis, for_seconds, cooldown_seconds
        self.active = False
        self.pending_since: float | None = None
        self.last_fired: float | None = None
        self.fired = 0
        self.suppressed = 0

    def cooling(self, now: float) -> bool:
        return self.last_fired is not None and now - self.last_fired < self.cooldown

    def fire(self, now: float) -> bool:
        """Fire now unless within the cooldown (then count it as suppressed)."""
        if self.cooling(now):
            self.suppressed += 1
            return False
        self.last_fired = now
        self.fired += 1
        return True

    def on_reading(self, trigger: ThresholdTrigger, value: float, now: float) -> str | None:
        """``fire`` when the threshold has been passed for ``for_seconds`` (and the cooldown is
        over), ``clear`` when the value is back by ``hysteresis``, else None."""
        if self.active:
            if trigger.cleared(value, self.hysteresis):
                self.active = False
                self.pending_since = None
                return "clear"
            return None
        if not trigger.over(value):
            self.pending_since = None
            return None
        if self.pending_since is None:
            self.pending_since = now
        if now - self.pending_since < self.for_seconds or self.cooling(now):
            return None  # waits: the next reading decides again
        self.active = True
        self.pending_since = None
        self.last_fired = now
        self.fired += 1
        return "fire"
