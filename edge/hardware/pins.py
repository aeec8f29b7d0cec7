"""The allowlisted pins as the hardware knows them: each pin's physical facts (:class:`Pin`),
read from one ``[boards.NAME]`` section against what its board can do (:func:`pin_table`), and
a pin found by any of its names across the boards (:func:`locate`).

Unknown pins, modes a pin cannot take, two keys for one pin and aliases that hide another pin's
name are problems at their dotted key (``boards.gpio.pins.nosuchpin``), all of a config's found
together and reported at once (:func:`edge.config.loader.invalid_config`).

An input is **on when it is active** (gpiozero's meaning): pressed, closed, triggered. With
``pull = "up"`` (the default) that is a low line, with ``pull = "down"`` a high one; without a
pull, the level its ``active`` names. :func:`input_active_low` decides it, once, and every view
(``edge-cli``, chat, the tools, MCP, rules, interlocks, MQTT, the audit trail) reads the logical
value it gives; :func:`wiring` names the line beside it for a person.

>>> pin = Pin("gpio", "GPIO22", PinMode.OUTPUT, safe=False, aliases=("relay",), active_low=True)
>>> pin.label, pin.line(True), logical(pin, 1.0)
('gpio:GPIO22 (relay)', False, 0.0)
>>> tank = Pin("gpio", "GPIO5", PinMode.INPUT, aliases=("tank2",),
...            active_low=input_active_low(Pull.UP, None))
>>> logical(tank, 0.0), wiring(tank, True), wiring(tank, False)
(1.0, 'switch closed: line low, pulled up', 'switch open: line high, pulled up')
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from edge.core.validation import Problem
from edge.security.policy import PinRule
from peripherals.base import Board, PinMode, Pull
from peripherals.exc import UnknownPin
from peripherals.servo import ServoOptions, declared_servos

if TYPE_CHECKING:
    from edge.config.boards import BoardConfig, PinConfig


@dataclass(frozen=True)
class Pin:
    """One allowlisted pin's physical facts, from its config: mode, safe level, on-time limit,
    pull, aliases, wiring (``active_low``: an output's ``active_low``, an input's
    :func:`input_active_low`), debounce and the switches a minute it stands. The policy decides
    what is allowed."""

    board: str
    pin: str
    mode: PinMode
    safe: bool | None = None
    max_on_seconds: float | None = None
    pull: Pull = Pull.UP
    aliases: tuple[str, ...] = ()
    active_low: bool = False
    bounce_ms: int = 0
    max_switches_per_minute: int | None = None
    wired_here: bool = True
    """False for a fleet node's pin: the node reports its inputs as it means them (its own
    pull and ``active``), so nothing here inverts or describes their line."""
    approval: bool = True
    """False: the model's switches of this pin wait for nobody (``approval = false``)."""
    servo_range: tuple[float, float] | None = None
    """A servo declared in ``[boards.NAME.servos]``: the angles it takes (min, max)."""

    def line(self, on: bool) -> bool:
        """The electrical level (True: high) that means ``on`` for this pin."""
        return on != self.active_low

    @property
    def label(self) -> str:
        return f"{self.board}:{self.pin}" + (f" ({', '.join(self.aliases)})" if self.aliases else "")

    @property
    def rule(self) -> PinRule:
        """What the policy allows on this pin."""
        return PinRule(self.board, self.pin, self.mode, self.label, self.max_switches_per_minute,
                       self.approval)


def input_active_low(pull: Pull, active: str | None) -> bool:
    """Whether an input is on at a low line: what its ``active`` says, else what its pull
    means (a switch to the other rail closes it: low when pulled up, high when pulled down)."""
    if active is not None:
        return active == "low"
    return pull is Pull.UP


def wiring(pin: Pin, on: bool, *, its: bool = False) -> str | None:
    """What ``on`` (an input's logical state) is on its wire, for a person checking it against
    the wiring: ``switch closed: line low, pulled up`` (``its``: ``its switch is closed: line
    low, pulled up``, ``its line is high, no pull``); None for other pins."""
    if pin.mode is not PinMode.INPUT or not pin.wired_here:
        return None
    line = "high" if pin.line(on) else "low"
    if pin.pull is Pull.NONE:
        return f"its line is {line}, no pull" if its else f"line {line}, no pull"
    closed = pin.line(on) != (pin.pull is Pull.UP)  # away from its pull: a switch to the other rail
    contact = "closed" if closed else "open"
    return (f"its switch is {contact}" if its else f"switch {contact}") + \
        f": line {line}, pulled {pin.pull.value}"


def logical(pin: Pin, level: float) -> float:
    """A board's electrical reading as the pin's logical value (inverted when active-low)."""
    if pin.active_low and pin.mode is not PinMode.ANALOG:
        return 1.0 - level
    return level


def locate(boards: Mapping[str, Board], spec: str, pins: Iterable[Pin] = ()) -> tuple[str, str]:
    """(board, canonical pin) for ``led``, ``GPIO17``, ``BOARD11`` or ``board:pin``; UnknownPin
    says why not in one sentence: no such board, no such pin (naming the allowlisted ``pins``),
    or a pin on several boards."""
    spec = str(spec).strip()
    prefix, sep, rest = spec.partition(":")
    if sep and prefix in boards:
        return prefix, boards[prefix].resolve(rest)
    found = []
    for name, board in boards.items():
        try:
            found.append((name, board.resolve(spec)))
        except UnknownPin:
            continue
    if len(found) == 1:
        return found[0]
    if found:
        names = ", ".join(f"{b}:{spec}" for b, _ in found)
        raise UnknownPin(f"{spec!r} is on several boards; say which: {names}")
    if not boards:
        raise UnknownPin("no boards are configured; add a [boards.NAME] section")
    allowlisted = ", ".join(p.label for p in pins)
    known = f"; the allowlisted pins are {allowlisted}" if allowlisted else ""
    if sep and prefix and " " not in prefix:
        raise UnknownPin(f"there is no board {prefix!r} (boards: {', '.join(boards)}); write "
                         f"BOARD:PIN with one of them{known}")
    where = f"board {next(iter(boards))}" if len(boards) == 1 else \
        f"any board ({', '.join(boards)})"
    raise UnknownPin(f"{spec!r} is not a pin on {where}{known}")


def pin_table(name: str, section: BoardConfig, board: Board, problems: list[Problem]) -> list[Pin]:
    """The pins ``[boards.NAME.pins]`` allowlists on ``board``, in config order. What could never
    work goes to ``problems`` at its key (``boards.NAME.pins.KEY``, ``boards.NAME.aliases.ALIAS``)
    and its pin is left out; a key that is an alias the board refused was reported at the alias."""
    _check_aliases(name, board, section.aliases, problems)
    modes = {info.name: info.modes for info in board.capabilities()}
    seen: dict[str, str] = {}
    pins: list[Pin] = []
    for key, pin_cfg in section.pins.items():
        where = ("boards", name, "pins", key)
        try:
            pin = board.resolve(key)
        except UnknownPin as exc:
            if key not in section.aliases:
                problems.append(Problem(where, "value", str(exc)))
            continue
        if pin in modes and pin_cfg.mode not in modes[pin]:
            can = ", ".join(sorted(m.value for m in modes[pin])) or "nothing"
            problems.append(Problem(where, "value", f"{pin} on board {name} ({section.type}) cannot "
                                    f"be {pin_cfg.mode.value} (it can be: {can})"))
            continue
        if pin in seen:
            problems.append(Problem(where, "value", f"same pin as boards.{name}.pins.{seen[pin]} ({pin})"))
            continue
        seen[pin] = key
        safe = None if pin_cfg.safe is None else pin_cfg.safe == "on"
        aliases = tuple(a for a in section.aliases if _resolved(board, a) == pin)
        pins.append(Pin(name, pin, pin_cfg.mode, safe, pin_cfg.max_on_seconds, pin_cfg.pull,
                        aliases, _active_low(pin_cfg, board), pin_cfg.bounce_ms,
                        pin_cfg.switch_budget, board.kind != "node", pin_cfg.approval,
                        _servo_range(board, section.servos, pin)))
    return pins


def _servo_range(board: Board, servos: Mapping[str, ServoOptions], pin: str) -> tuple[float, float] | None:
    servo = declared_servos(servos, board.resolve).get(pin)
    return None if servo is None else (servo.min_angle, servo.max_angle)


def _active_low(pin_cfg: PinConfig, board: Board) -> bool:
    if pin_cfg.mode is not PinMode.INPUT:
        return pin_cfg.active_low
    return board.kind != "node" and input_active_low(pin_cfg.pull, pin_cfg.active)


def _resolved(board: Board, spec: str) -> str | None:
    try:
        return board.resolve(spec)
    except UnknownPin:
        return None


def _check_aliases(name: str, board: Board, aliases: dict[str, str], problems: list[Problem]) -> None:
    """An alias must not be another pin's name: ``GPIO5 = "GPIO17"`` would hide GPIO5."""
    for alias, target in aliases.items():
        try:
            named = board.canonical(alias)
        except UnknownPin:
            continue
        meant = _resolved(board, alias)
        if meant is not None and named != meant:
            problems.append(Problem(("boards", name, "aliases", alias), "value",
                                    f"{alias!r} is the name of pin {named} but would mean {meant} "
                                    f"({target!r}); choose an alias that is not a pin name"))
