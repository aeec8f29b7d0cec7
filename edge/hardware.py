"""The boards the agent drives, as one object: pin lookup across boards, claiming pins at their
safe level, auto-off timers (``max_on_seconds``) and the safe state on shutdown.

This is the one door to the pins: callers name a pin and who asks (:class:`Requester`); the
hardware locates the pin, asks the policy (allowlist, modes, the caller's rate limit, the
approval gate, the pin's own ``max_switches_per_minute``), runs the one-shot and
``max_on_seconds`` guards, then acts. Nobody hands it a rule.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol

from edge.config.model import Config
from edge.core.actuation import Actuation, ActuationRecorder, Outcome
from edge.core.exc import ConfigError, PolicyDenied
from edge.core.ratelimit import SharedWindow
from edge.core.requester import Requester
from edge.core.supervision import SupervisedTask
from edge.pins import Pin, logical, pin_table
from edge.security.approvals import ApprovalGate
from edge.security.policy import RATE_WINDOW_SECONDS, Action, SecurityPolicy, SwitchBudget
from peripherals.base import Board, BoardEvent, BoardListener, BoardStatus, PinMode
from peripherals.exc import BoardError, UnknownPin
from peripherals.factory import create_board
from peripherals.supervisor import BoardSupervisor

log = logging.getLogger(__name__)

RECENT_EVENTS_KEPT = 20
ONE_SHOT_RATES = "one-shot-actuations.json"
ONE_SHOT_SWITCHES = "one-shot-switches.json"


class Guard(Protocol):
    """Asked by the door before each change, after the policy (the interlocks,
    :mod:`edge.automation.interlocks`): raises a ``PolicyDenied`` to refuse setting ``rule`` to
    ``value`` (logical: 1/0, a duty, an angle)."""

    def check(self, rule: Pin, value: float) -> None: ...


class Hardware:
    def __init__(self, boards: dict[str, Board], pins: list[Pin], policy: SecurityPolicy, *,
                 resident: bool, hold_seconds: float | None = None,
                 recorders: Sequence[ActuationRecorder] = ()):
        """``resident``: a long-lived daemon that claims every allowlisted pin and runs timers.
        ``hold_seconds``: a one-shot command that stays this long to hold what it set, then
        returns it to its safe level (``edge-cli gpio write --hold``). ``recorders``: told of
        every actuation, refusal, auto-off and safe state (the audit trail, receipts), awaited
        before the caller hears of it (:meth:`add_recorder` adds one later)."""
        self.boards = boards
        self.pins = {(p.board, p.pin): p for p in pins}
        self._policy = policy
        self.resident = resident
        self.hold_seconds = hold_seconds
        self._timers: dict[tuple[str, str], asyncio.Task] = {}
        self._claimed: set[tuple[str, str]] = set()
        self.guard: Guard | None = None
        """The interlocks, set once by the automation that builds them (:meth:`set_guard`)."""
        self._supervisor: SupervisedTask | None = None
        self.recent_events: deque[tuple[float, BoardEvent]] = deque(maxlen=RECENT_EVENTS_KEPT)
        """What the boards reported by themselves, newest last (status, the model's prompt)."""
        self._listeners: list[BoardListener] = []
        """Subscribers told of each actuation (``kind="output"``), whoever asked for it."""
        self._recorders: list[ActuationRecorder] = list(recorders)
        self.last_actuation: dict[tuple[str, str], Actuation] = {}
        """Each pin's latest outcome at this door (what the tools report: the read-back value)."""

    def add_recorder(self, recorder: ActuationRecorder) -> Callable[[], None]:
        """Tell ``recorder`` of every outcome from now on; returns a function that stops it."""
        self._recorders.append(recorder)

        def remove() -> None:
            if recorder in self._recorders:
                self._recorders.remove(recorder)
        return remove

    async def record(self, actuation: Actuation) -> None:
        """Await every recorder with ``actuation`` (a durable one commits it first); a recorder
        that fails is logged and never undoes what the pin did. Interlocks call this for trips."""
        if actuation.pin:
            self.last_actuation[(actuation.board, actuation.pin)] = actuation
        for recorder in list(self._recorders):
            try:
                await recorder.record(actuation)
            except Exception:
                log.exception("actuation_record_failed board=%s pin=%s action=%s",
                              actuation.board, actuation.pin, actuation.action)

    def _outcome(self, rule: Pin | None, action: str, asked: float | None,
                 requester: Requester | None, *, board: str = "", pin: str = "",
                 read_back: float | None = None, outcome: Outcome = "ok",
                 reason: str = "") -> Actuation:
        """One record of an outcome at this door (``requester`` None: the agent's own timers
        and safe state)."""
        return Actuation(
            at=time.time(), board=rule.board if rule else board, pin=rule.pin if rule else pin,
            label=(rule.aliases[0] if rule.aliases else rule.pin) if rule else pin,
            action=action, asked=asked, read_back=read_back,
            outcome=outcome,
            reason=reason, caller=requester.caller if requester else "agent",
            door=requester.channel if requester else "agent",
            why=(requester.why or requester.sender) if requester else action)

    async def _read_back(self, rule: Pin) -> float | None:
        """What the board says the output now is (logical), or None where it cannot say."""
        try:
            return logical(rule, await self.boards[rule.board].read(rule.pin))
        except Exception as exc:  # a read-back is a report, never a reason to fail the act
            log.debug("read_back_failed board=%s pin=%s error=%r", rule.board, rule.pin, exc)
            return None

    async def _done(self, rule: Pin, action: str, asked: float, requester: Requester | None,
                    act: Coroutine[Any, Any, None], on: bool) -> Actuation:
        """Act (claim, timer, the board call), read the pin back and record the outcome: ok
        with the read-back value, or failed with the board's words (then re-raised)."""
        try:
            await self._actuate(rule, on, act)
        except BoardError as exc:
            await self.record(self._outcome(rule, action, asked, requester, outcome="failed",
                                            reason=str(exc)))
            raise
        done = self._outcome(rule, action, asked, requester,
                             read_back=await self._read_back(rule) if action != "servo" else None)
        await self.record(done)
        return done

    def set_guard(self, guard: Guard) -> None:
        """Ask ``guard`` before every write, PWM duty and servo angle, whoever asks."""
        self.guard = guard

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
                if board.connected:
                    await self._board_up(name)
            self._supervisor = SupervisedTask(
                "board-supervisor", BoardSupervisor(self.boards, self._board_up).run).start()
            self.subscribe(self._record_event)

    def refusal(self, board: str, pin: str, action: Action) -> str | None:
        """Why the policy refuses ``action`` on the pin whoever asks and whenever (the
        allowlist, the pin's mode, ``readonly`` autonomy), or None: automation checks its rules
        and sensors with this before the agent starts."""
        return self._policy.refusal(board, pin, action)

    def supervised_tasks(self) -> list[SupervisedTask]:
        """The board supervisor (a resident agent's, once started)."""
        return [self._supervisor] if self._supervisor is not None else []

    def _record_event(self, event: BoardEvent) -> None:
        if event.kind == "output":  # our own actuations are logged where they happen
            return
        self.recent_events.append((time.time(), event))
        log.info("board_event board=%s kind=%s pin=%s value=%s",
                 event.board, event.kind, event.pin, event.value)

    async def _board_up(self, name: str) -> None:
        """Claim the board's allowlisted pins and tell firmware with a watchdog the safe values.
        A pin that cannot be claimed is logged and retried on its next use; the others work.
        What its outputs hold is unknown until they are set again (a board that came back may
        have driven its safe values)."""
        for rule in self.pins.values():
            if rule.board == name:
                self._policy.switches.known(rule.board, rule.pin, None)
                try:
                    await self.claim(rule)
                except BoardError as exc:
                    log.error("pin_claim_failed board=%s pin=%s error=%r", name, rule.pin, str(exc))
        try:
            await self.boards[name].declare_safe_state(self.safe_levels(name))
        except BoardError as exc:
            log.error("safe_state_declare_failed board=%s error=%r", name, str(exc))

    async def claim(self, rule: Pin) -> None:
        """Set the pin up; an output starts at its safe level (off when it has none), so an
        active-low relay never clicks on while it is claimed. A one-shot command adopts an
        output the board already drives at the level it has (a read reports it, a write does
        not pass through the safe level)."""
        key = (rule.board, rule.pin)
        if key in self._claimed:
            return
        board = self.boards[rule.board]
        initial = rule.line(bool(rule.safe)) if rule.mode is not PinMode.INPUT else False
        setup = board.setup_pin if self.resident else board.adopt_pin
        await setup(rule.pin, rule.mode, rule.pull, initial=initial, bounce_ms=rule.bounce_ms)
        self._claimed.add(key)
        if self.resident and rule.mode is not PinMode.INPUT:
            self._policy.switches.known(rule.board, rule.pin, float(bool(rule.safe)))

    def _check_oneshot(self, rule: Pin, on: bool) -> None:
        """Without a running agent, refuse what would not be true once this process exits:
        a level on a board that does not keep it (the Pi header), an on-time nobody would end."""
        if self.resident:
            return
        if not self.boards[rule.board].holds_levels and self.hold_seconds is None:
            raise BoardError(
                f"{rule.label}: board {rule.board} does not keep a level once this command exits "
                "and no agent is running; start the agent (`edge-cli run` or `sudo systemctl "
                "start edge-agent`) and try again, or add --hold SECONDS to drive it from this "
                "command for that long and then return it to its safe level")
        limit = rule.max_on_seconds
        if on and limit and (self.hold_seconds is None or self.hold_seconds > limit):
            raise BoardError(f"{rule.label} has max_on_seconds = {limit:g}; only the running "
                             "agent can time it out, so start it with `edge-cli run` (or hold "
                             f"it from this command with --hold of at most {limit:g} s)")

    # the one door: name a pin and who asks; the policy, approvals and guards run here --------

    async def _permit(self, spec: str, action: Action, requester: Requester,
                      summary: str, value: float | None = None, *,
                      oneshot: bool | None = None) -> Pin:
        """:meth:`_ask` and, for a change, the one-shot guards (``oneshot``: whether it turns
        the pin on); a refusal of a change is recorded (who, why) before it is raised."""
        try:
            rule = await self._ask(spec, action, requester, summary, value)
            if oneshot is not None:
                self._check_oneshot(rule, oneshot)
            return rule
        except (PolicyDenied, BoardError) as exc:
            if action is not Action.READ:
                known = self._known(spec)
                await self.record(self._outcome(
                    known, action.value, value, requester, board=known.board if known else "",
                    pin=known.pin if known else spec, outcome="refused", reason=str(exc)))
            raise

    def _known(self, spec: str) -> Pin | None:
        try:
            return self.pins.get(self.locate(spec))
        except BoardError:
            return None

    async def _ask(self, spec: str, action: Action, requester: Requester,
                   summary: str, value: float | None = None) -> Pin:
        """Locate the pin and ask the policy for a change to ``value`` (logical: 1/0, a duty,
        an angle; the safe level for ``SAFE``). ``summary`` (what an approval prompt says) names
        the pin with ``{pin}``, filled with its label (``gpio:GPIO17 (led)``), never with the
        words the model wrote."""
        board, pin = self.locate(spec)
        known = self.pins.get((board, pin))
        label = known.label if known else f"{board}:{pin}"
        if action is Action.SAFE and known is not None:
            value = float(bool(known.safe))
        rule = await self._policy.permit(board, pin, action, requester, summary.format(pin=label),
                                        value)
        found = self.pins[(rule.board, rule.pin)]
        if self.guard is not None and action not in (Action.READ, Action.SAFE) and value is not None:
            self.guard.check(found, value)
        return found

    async def read(self, spec: str, requester: Requester) -> tuple[Pin, float]:
        """The pin's rule and logical value: 1 is on (a low line on an active-low pin); PWM pins
        report their duty."""
        rule = await self._permit(spec, Action.READ, requester, "read {pin}")
        return rule, await self._read(rule)

    async def write(self, spec: str, on: bool, requester: Requester) -> Pin:
        """Switch an output on or off (after the policy, approvals and one-shot guards)."""
        rule = await self._permit(spec, Action.WRITE, requester,
                                  "switch {pin} " + ("on" if on else "off"), float(on), oneshot=on)
        await self._done(rule, "write", float(on), requester,
                         self.boards[rule.board].write(rule.pin, rule.line(on)), on)
        log.info("actuation board=%s pin=%s value=%s by=%s", rule.board, rule.pin,
                 "on" if on else "off", requester.caller)
        self._output_changed(rule, float(on))
        return rule

    async def pwm(self, spec: str, duty: float, frequency: float | None,
                  requester: Requester) -> Pin:
        rule = await self._permit(spec, Action.PWM, requester,
                                  f"set {{pin}} PWM duty to {duty:.2f}", duty, oneshot=duty > 0)
        line_duty = 1.0 - duty if rule.active_low else duty
        await self._done(rule, "pwm", duty, requester,
                         self.boards[rule.board].pwm(rule.pin, line_duty, frequency), duty > 0)
        log.info("actuation board=%s pin=%s duty=%.3f frequency=%s by=%s",
                 rule.board, rule.pin, duty, frequency, requester.caller)
        self._output_changed(rule, duty)
        return rule

    async def servo(self, spec: str, angle: float, requester: Requester) -> Pin:
        rule = await self._permit(spec, Action.SERVO, requester,
                                  f"turn the servo on {{pin}} to {angle:g} degrees", angle,
                                  oneshot=True)
        await self._done(rule, "servo", angle, requester,
                         self.boards[rule.board].servo(rule.pin, angle), True)
        log.info("actuation board=%s pin=%s servo=%g by=%s", rule.board, rule.pin, angle,
                 requester.caller)
        self._output_changed(rule, angle)
        return rule

    async def make_safe(self, spec: str, requester: Requester) -> Pin:
        """Return an allowlisted output to its safe level (off when it has none): never refused
        by the pin's budget of switches (it counts, though)."""
        rule = await self._permit(spec, Action.SAFE, requester, "return {pin} to its safe level")
        on = bool(rule.safe)
        await self._done(rule, "safe", float(on), requester,
                         self.boards[rule.board].write(rule.pin, rule.line(on)), on)
        log.info("safe_state board=%s pin=%s value=%s by=%s", rule.board, rule.pin,
                 "on" if on else "off", requester.caller)
        self._output_changed(rule, float(on))
        return rule

    async def _read(self, rule: Pin) -> float:
        if (not self.resident and rule.mode is not PinMode.INPUT
                and not self.boards[rule.board].holds_levels):
            raise BoardError(f"{rule.label} is an output and no agent is driving it: board "
                             f"{rule.board} keeps no level without one, so there is nothing "
                             "to read; start the agent (`edge-cli run`) and ask it")
        await self.claim(rule)
        level = await self.boards[rule.board].read(rule.pin)
        return logical(rule, level)

    async def _actuate(self, rule: Pin, on: bool, act: Coroutine[Any, Any, None]) -> None:
        """Claim, arm the auto-off timer, then act; a cancelled caller (``/stop``, a newer
        message, the turn's timeout) neither interrupts the act half way on a serial link nor
        leaves an output on without its timer."""
        try:
            await self.claim(rule)
        except BaseException:
            act.close()
            raise
        self._schedule_auto_off(rule, on)
        await asyncio.shield(act)

    def _schedule_auto_off(self, rule: Pin, on: bool) -> None:
        key = (rule.board, rule.pin)
        if not on:
            timer = self._timers.pop(key, None)
            if timer:
                timer.cancel()
        elif rule.max_on_seconds and key not in self._timers:
            self._timers[key] = asyncio.create_task(self._auto_off(rule))

    async def _auto_off(self, rule: Pin) -> None:
        await asyncio.sleep(rule.max_on_seconds or 0.0)
        self._timers.pop((rule.board, rule.pin), None)
        self._policy.switches.force(rule.rule, 0.0)  # counted, never refused
        try:
            await self.boards[rule.board].write(rule.pin, rule.line(False))
            log.info("auto_off board=%s pin=%s after=%gs", rule.board, rule.pin, rule.max_on_seconds)
        except BoardError as exc:
            log.error("auto_off_failed board=%s pin=%s error=%r", rule.board, rule.pin, exc)
            await self.record(self._outcome(rule, "auto-off", 0.0, None, outcome="failed",
                                            reason=str(exc)))
            return
        await self.record(self._outcome(rule, "auto-off", 0.0, None,
                                        read_back=await self._read_back(rule)))
        self._output_changed(rule, 0.0)

    async def shutdown(self) -> None:
        """Cancel timers and release the boards; a resident agent first drives every claimed
        output to its safe level (a one-shot command leaves the level it was asked for)."""
        if self._supervisor:
            await self._supervisor.aclose()
            self._supervisor = None
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        for name, board in self.boards.items():
            safe = {pin: level for pin, level in self.safe_levels(name).items()
                    if (name, pin) in self._claimed}
            try:
                if self.resident:
                    failed = await board.apply_safe_state(safe)
                    self._log_safe_state(name, safe, failed)
                    await self._record_safe_state(name, safe, failed)
                await board.close()
            except BoardError as exc:
                log.error("board_shutdown_failed board=%s error=%r", name, exc)
        self._claimed.clear()

    def _log_safe_state(self, board: str, levels: dict[str, bool], failed: list[str]) -> None:
        for pin, line in levels.items():
            rule = self.pins.get((board, pin))
            if pin in failed or rule is None:
                continue
            log.info("safe_state board=%s pin=%s value=%s line=%s", board, pin,
                     "on" if rule.safe else "off", "high" if line else "low")

    async def _record_safe_state(self, board: str, levels: dict[str, bool],
                                 failed: list[str]) -> None:
        for pin in levels:
            rule = self.pins.get((board, pin))
            if rule is None:
                continue
            asked = float(bool(rule.safe))
            if pin in failed:
                await self.record(self._outcome(rule, "safe-state", asked, None,
                                                outcome="failed", reason="board refused it"))
            else:
                await self.record(self._outcome(rule, "safe-state", asked, None,
                                                read_back=await self._read_back(rule)))

    def pin_list(self) -> list[Pin]:
        """Every allowlisted pin with its facts, in config order."""
        return list(self.pins.values())

    def safe_levels(self, board: str) -> dict[str, bool]:
        """Each output's safe level on ``board`` as a line level (True: high): a safe "off" on
        an active-low pin is a high line."""
        return {p.pin: p.line(p.safe) for p in self.pins.values()
                if p.board == board and p.safe is not None}

    def _output_changed(self, rule: Pin, value: float) -> None:
        """Tell subscribers an output now has ``value`` (logical: 1/0, a PWM duty, a servo angle)."""
        event = BoardEvent(rule.board, "output", rule.pin, value)
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception:  # the pin has changed: a broken observer must not undo that
                log.exception("output_listener_failed board=%s pin=%s", rule.board, rule.pin)

    def subscribe(self, listener: BoardListener) -> Callable[[], None]:
        """Events from every board that reports them: input changes (logical values, like
        :meth:`read`), firmware watchdog trips, boards going down and coming back; and
        ``output`` after each actuation through this door or its timers (write, pwm, servo,
        make_safe, auto-off: 1/0, the duty or the angle), whoever asked. Listeners run on the
        event loop."""
        def made_logical(event: BoardEvent) -> None:
            rule = self.pins.get((event.board, event.pin)) if event.pin else None
            if rule is not None and rule.active_low and event.value is not None:
                event = replace(event, value=logical(rule, event.value))
            listener(event)

        unsubscribers = [board.subscribe(made_logical) for board in self.boards.values()]
        self._listeners.append(listener)

        def unsubscribe_all() -> None:
            for unsubscribe in unsubscribers:
                unsubscribe()
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe_all

    def status(self) -> list[BoardStatus]:
        """Each board's status with pin values made logical (1 is on, whatever the wiring)."""
        statuses = []
        for board in self.boards.values():
            status = board.status()
            for state in status.pins:
                known = self.pins.get((status.name, state.name))
                if known is not None:
                    state.value = logical(known, state.value)
            statuses.append(status)
        return statuses

    def events(self, last: int = RECENT_EVENTS_KEPT) -> list[dict]:
        """The most recent board events as plain data, newest last."""
        return [{"time": at, "board": e.board, "kind": e.kind, "pin": e.pin, "value": e.value}
                for at, e in list(self.recent_events)[-last:]]


def build_hardware(config: Config, *, resident: bool, pin_factory: Any = None,
                   hold_seconds: float | None = None, state_dir: Path | None = None,
                   approvals: ApprovalGate | None = None) -> Hardware:
    """Boards, their pins and the policy from config; unknown or duplicate pins are ConfigErrors
    naming the key. ``state_dir``: where one-shot commands (not ``resident``) count actuations
    and each pin's switches together. ``approvals``: the agent's gate (its runtime builds it,
    with the channels that answer it); without one, a gate for ``[security] autonomy`` that no
    channel answers (direct commands need none; what a model asks under ``supervised`` is
    refused)."""
    boards: dict[str, Board] = {}
    pins: list[Pin] = []
    for name, section in config.boards.items():
        options = section.model_dump(exclude={"type", "pins"})
        try:
            board = create_board(name, section.type, options, pin_factory=pin_factory)
        except UnknownPin as exc:
            raise ConfigError(f"boards.{name}.aliases: {exc}") from None
        boards[name] = board
        pins.extend(pin_table(name, section, board))
    gate = approvals or ApprovalGate.from_config(config.security)
    rates = switches = None
    if not resident and state_dir is not None:
        rates = SharedWindow(RATE_WINDOW_SECONDS, state_dir / ONE_SHOT_RATES)
        switches = SwitchBudget(SharedWindow(RATE_WINDOW_SECONDS, state_dir / ONE_SHOT_SWITCHES))
    policy = SecurityPolicy([p.rule for p in pins], config.security.max_actuations_per_minute,
                            approvals=gate, rates=rates, switches=switches)
    return Hardware(boards, pins, policy, resident=resident, hold_seconds=hold_seconds)
