"""The boards the agent drives, as one object: pin lookup across boards, claiming pins at their
safe level, auto-off timers (``max_on_seconds``) and the safe state on shutdown.

Policy checks are not here: tools call :meth:`SecurityPolicy.authorize` first, then this.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Callable

from edge.config.model import Config
from edge.exc import ConfigError
from edge.security.approvals import ApprovalGate
from edge.security.policy import PinRule, SecurityPolicy
from peripherals.base import Board, BoardEvent, BoardListener, BoardStatus, EventSource, PinMode
from peripherals.exc import BoardError, PinModeError, UnknownPin
from peripherals.factory import create_board
from peripherals.supervisor import BoardSupervisor

log = logging.getLogger(__name__)

RECENT_EVENTS_KEPT = 20


class Hardware:
    def __init__(self, boards: dict[str, Board], policy: SecurityPolicy, *, resident: bool):
        """``resident``: a long-lived daemon that claims every allowlisted pin and runs timers."""
        self.boards = boards
        self.policy = policy
        self.resident = resident
        self._timers: dict[tuple[str, str], asyncio.Task] = {}
        self._claimed: set[tuple[str, str]] = set()
        self._supervisor: asyncio.Task | None = None
        self.recent_events: deque[tuple[float, BoardEvent]] = deque(maxlen=RECENT_EVENTS_KEPT)
        """What the boards reported by themselves, newest last (status, the model's prompt)."""

    def locate(self, spec: str) -> tuple[str, str]:
        """(board, canonical pin) for ``led``, ``GPIO17``, ``BOARD11`` or ``board:pin``."""
        spec = str(spec).strip()
        prefix, sep, rest = spec.partition(":")
        if sep and prefix in self.boards:
            return prefix, self.boards[prefix].resolve(rest)
        found, errors = [], []
        for name, board in self.boards.items():
            try:
                found.append((name, board.resolve(spec)))
            except UnknownPin as exc:
                errors.append(str(exc))
        if len(found) == 1:
            return found[0]
        if found:
            names = ", ".join(f"{b}:{spec}" for b, _ in found)
            raise UnknownPin(f"{spec!r} is on several boards; say which: {names}")
        if not self.boards:
            raise UnknownPin("no boards are configured; add a [boards.NAME] section")
        raise UnknownPin(errors[0] if len(errors) == 1 else f"{spec!r} is not a pin on any board")

    async def start(self) -> None:
        """Connect every board. One that is down is reported (its status says why) and calls
        on it fail fast, while the other boards work: a resident agent's supervisor connects it
        when it comes back; a one-shot command still acts on the boards that are up."""
        for name, board in self.boards.items():
            try:
                await board.connect()
            except BoardError as exc:
                log.error("board_down board=%s error=%r", name, str(exc))
        if self.resident:
            for name, board in self.boards.items():
                if getattr(board, "connected", True):
                    await self._board_up(name)
            self._supervisor = asyncio.create_task(
                BoardSupervisor(self.boards, self._board_up).run(), name="board-supervisor")
            self.subscribe(self._record_event)

    def _record_event(self, event: BoardEvent) -> None:
        self.recent_events.append((time.time(), event))
        log.info("board_event board=%s kind=%s pin=%s value=%s",
                 event.board, event.kind, event.pin, event.value)

    async def _board_up(self, name: str) -> None:
        """Claim the board's allowlisted pins and tell firmware with a watchdog the safe values."""
        for rule in self.policy.rules:
            if rule.board == name:
                await self.claim(rule)
        declare = getattr(self.boards[name], "declare_safe_state", None)
        if declare is not None:
            await declare(self.policy.safe_levels(name))

    async def claim(self, rule: PinRule) -> None:
        key = (rule.board, rule.pin)
        if key in self._claimed:
            return
        board = self.boards[rule.board]
        await board.setup_pin(rule.pin, rule.mode, rule.pull)
        if rule.safe and rule.mode is not PinMode.INPUT:
            await board.write(rule.pin, True)
        self._claimed.add(key)

    async def read(self, rule: PinRule) -> float:
        await self.claim(rule)
        return await self.boards[rule.board].read(rule.pin)

    async def write(self, rule: PinRule, on: bool) -> None:
        if on and rule.max_on_seconds and not self.resident:
            raise BoardError(f"{rule.label} has max_on_seconds = {rule.max_on_seconds:g}; only the "
                             "running agent can time it out, so start it with `edge-cli run`")
        await self.claim(rule)
        await self.boards[rule.board].write(rule.pin, on)
        self._schedule_auto_off(rule, on)

    async def pwm(self, rule: PinRule, duty: float, frequency: float | None) -> None:
        await self.claim(rule)
        await self.boards[rule.board].pwm(rule.pin, duty, frequency)
        self._schedule_auto_off(rule, duty > 0)

    async def servo(self, rule: PinRule, angle: float) -> None:
        servo = getattr(self.boards[rule.board], "servo", None)
        if servo is None:
            raise PinModeError(f"board {rule.board} cannot drive servos (an Arduino can, on D9 "
                               "and D10)")
        await self.claim(rule)
        await servo(rule.pin, angle)

    def _schedule_auto_off(self, rule: PinRule, on: bool) -> None:
        key = (rule.board, rule.pin)
        if not on:
            timer = self._timers.pop(key, None)
            if timer:
                timer.cancel()
        elif rule.max_on_seconds and key not in self._timers:
            self._timers[key] = asyncio.create_task(self._auto_off(rule))

    async def _auto_off(self, rule: PinRule) -> None:
        await asyncio.sleep(rule.max_on_seconds)
        self._timers.pop((rule.board, rule.pin), None)
        try:
            await self.boards[rule.board].write(rule.pin, False)
            log.info("auto_off board=%s pin=%s after=%gs", rule.board, rule.pin, rule.max_on_seconds)
        except BoardError as exc:
            log.error("auto_off_failed board=%s pin=%s error=%r", rule.board, rule.pin, exc)

    async def shutdown(self) -> None:
        """Cancel timers and release the boards; a resident agent first drives every claimed
        output to its safe level (a one-shot command leaves the level it was asked for)."""
        if self._supervisor:
            self._supervisor.cancel()
            await asyncio.gather(self._supervisor, return_exceptions=True)
            self._supervisor = None
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        for name, board in self.boards.items():
            safe = {pin: level for pin, level in self.policy.safe_levels(name).items()
                    if (name, pin) in self._claimed}
            try:
                if self.resident:
                    await board.apply_safe_state(safe)
                await board.close()
            except BoardError as exc:
                log.error("board_shutdown_failed board=%s error=%r", name, exc)
        self._claimed.clear()

    def subscribe(self, listener: BoardListener) -> Callable[[], None]:
        """Events from every board that reports them: input changes, firmware watchdog trips,
        boards going down and coming back. Listeners run on the event loop."""
        unsubscribers = [board.subscribe(listener) for board in self.boards.values()
                         if isinstance(board, EventSource)]
        return lambda: [unsubscribe() for unsubscribe in unsubscribers] and None

    def status(self) -> list[BoardStatus]:
        return [board.status() for board in self.boards.values()]

    def events(self, last: int = RECENT_EVENTS_KEPT) -> list[dict]:
        """The most recent board events as plain data, newest last."""
        return [{"time": at, "board": e.board, "kind": e.kind, "pin": e.pin, "value": e.value}
                for at, e in list(self.recent_events)[-last:]]


def build_hardware(config: Config, *, resident: bool, pin_factory=None) -> Hardware:
    """Boards and policy from config; unknown or duplicate pins are ConfigErrors naming the key."""
    boards: dict[str, Board] = {}
    rules: list[PinRule] = []
    for name, section in config.boards.items():
        options = section.model_dump(exclude={"type", "pins"})
        try:
            board = create_board(name, section.type, options, pin_factory=pin_factory)
        except UnknownPin as exc:
            raise ConfigError(f"boards.{name}.aliases: {exc}") from None
        boards[name] = board
        seen: dict[str, str] = {}
        for key, pin_cfg in section.pins.items():
            try:
                pin = board.resolve(key)
            except UnknownPin as exc:
                raise ConfigError(f"boards.{name}.pins.{key}: {exc}") from None
            if pin in seen:
                raise ConfigError(f"boards.{name}.pins.{key}: same pin as "
                                  f"boards.{name}.pins.{seen[pin]} ({pin})")
            seen[pin] = key
            safe = None if pin_cfg.safe is None else pin_cfg.safe == "on"
            aliases = tuple(a for a, target in section.aliases.items() if board.resolve(a) == pin)
            rules.append(PinRule(name, pin, pin_cfg.mode, safe, pin_cfg.max_on_seconds,
                                 pin_cfg.pull, aliases))
    gate = ApprovalGate(config.security.autonomy, config.security.approval_timeout_seconds)
    policy = SecurityPolicy(rules, config.security.max_actuations_per_minute, approvals=gate)
    return Hardware(boards, policy, resident=resident)
