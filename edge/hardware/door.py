"""The boards the agent drives, as one object: pin lookup across boards, claiming pins at their
safe level, auto-off timers (``max_on_seconds``) and the safe state on shutdown.

This is the one door to the pins: callers name a pin and who asks (:class:`Requester`); the
hardware locates the pin, asks the policy (allowlist, modes, the caller's rate limit, the
approval gate, the pin's own ``max_switches_per_minute``), runs the one-shot and
``max_on_seconds`` guards, then acts. Nobody hands it a rule.

Beside it in this package (:mod:`edge.hardware`): the boards and pins the config describes, and
the door built from them (:func:`~edge.hardware.board_setup.build_hardware`), the pins' facts and
lookup (:mod:`~edge.hardware.pins`), the pins claimed at their safe level and returned to it at
shutdown (:mod:`~edge.hardware.claims`), the timers and one-shot guards
(:mod:`~edge.hardware.holds`), the interlock groups (:mod:`~edge.hardware.atomic`), the record of
every outcome (:mod:`~edge.hardware.outcomes`) and the stream of board events
(:mod:`~edge.hardware.board_events`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Mapping, Sequence
from typing import Any, Protocol

from edge.core.actuation import Actuation, ActuationRecorder
from edge.core.exc import PolicyDenied
from edge.core.requester import Requester
from edge.core.supervision import SupervisedTask
from edge.hardware.atomic import AtomicGroups
from edge.hardware.board_events import RECENT_EVENTS_KEPT, BoardEvents
from edge.hardware.claims import PinClaims, safe_levels
from edge.hardware.holds import AutoOffTimers, hold_refusal, oneshot_refusal
from edge.hardware.outcomes import Outcomes
from edge.hardware.pin_values import PinMeanings, PinValue
from edge.hardware.pins import Pin, locate, logical
from edge.security.policy import Action, SecurityPolicy
from peripherals.base import Board, BoardListener, BoardStatus, PinMode
from peripherals.exc import BoardError
from peripherals.supervisor import BoardSupervisor

log = logging.getLogger(__name__)



class Guard(Protocol):
    """Asked by the door before each change, after the policy (the interlocks,
    :mod:`edge.automation.interlocks`): raises a ``PolicyDenied`` to refuse setting ``rule`` to
    ``value`` (logical: 1/0, a duty, an angle). :meth:`scopes` names the outputs each of its
    checks looks at together: the door runs a check and the switch it allows as one step
    against every other switch in the same scope (:mod:`edge.hardware.atomic`)."""

    def check(self, rule: Pin, value: float) -> None: ...

    def scopes(self) -> Iterable[Iterable[tuple[str, str]]]: ...


class Hardware:
    def __init__(self, boards: dict[str, Board], pins: list[Pin], policy: SecurityPolicy, *,
                 resident: bool, hold_seconds: float | None = None,
                 recorders: Sequence[ActuationRecorder] = (),
                 meanings: PinMeanings | None = None,
                 details: Mapping[str, str] | None = None,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep):
        """``resident``: a long-lived daemon that claims every allowlisted pin and runs timers.
        ``hold_seconds``: a one-shot command that stays this long to hold what it set, then
        returns it to its safe level (``edge-cli gpio write --hold``). ``recorders``: told of
        every actuation, refusal, auto-off and safe state (the audit trail, receipts), awaited
        before the caller hears of it (:meth:`add_recorder` adds one later). ``meanings``: the
        sensors that scale analog pins, for :meth:`value_of`.
        ``details``: what status says of a board instead of its own detail (how the config
        made it simulated). ``sleep``: how the ``max_on_seconds`` timers wait (a scenario's
        fast clock)."""
        self.boards = boards
        self.pins = {(p.board, p.pin): p for p in pins}
        self._policy = policy
        self.resident = resident
        self.hold_seconds = hold_seconds
        self._timers = AutoOffTimers(self._auto_off, sleep)
        self._details = dict(details or {})
        self._meanings = meanings or PinMeanings()
        """Each servo's last angle through this door, and the sensors that scale analog pins."""
        self.guard: Guard | None = None
        """The interlocks, set once by the automation that builds them (:meth:`set_guard`)."""
        self._atomic = AtomicGroups()
        self._supervisor: SupervisedTask | None = None
        self._events = BoardEvents(boards, self.pins)
        self.recent_events = self._events.recent
        """What the boards reported by themselves, newest last (status, the model's prompt)."""
        self.outcomes = Outcomes(boards, recorders)
        self.last_actuation = self.outcomes.last
        """Each pin's latest outcome at this door (what the tools report: the read-back value)."""
        self.claims = PinClaims(boards, self.pins, policy.switches, self.outcomes, resident=resident)

    def add_recorder(self, recorder: ActuationRecorder) -> Callable[[], None]:
        """Tell ``recorder`` of every outcome from now on; returns a function that stops it."""
        return self.outcomes.add(recorder)

    async def record(self, actuation: Actuation) -> None:
        """Await every recorder with ``actuation``; a recorder that fails is logged and never
        undoes what the pin did. Interlocks call this for trips."""
        await self.outcomes.record(actuation)

    def set_guard(self, guard: Guard) -> None:
        """Ask ``guard`` before every write, PWM duty and servo angle, whoever asks, as one step
        with the switch it allows."""
        self.guard = guard
        self._atomic = AtomicGroups(guard.scopes())

    def locate(self, spec: str) -> tuple[str, str]:
        """(board, canonical pin) for ``led``, ``GPIO17``, ``BOARD11`` or ``board:pin``."""
        return locate(self.boards, spec, self.pins.values())

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
                    await self.claims.board_up(name)
            self._supervisor = SupervisedTask(
                "board-supervisor", BoardSupervisor(self.boards, self.claims.board_up,
                                                    held=self.claims.held).run).start()
            self.subscribe(self._events.keep)

    def refusal(self, board: str, pin: str, action: Action) -> str | None:
        """Why the policy refuses ``action`` on the pin whoever asks and whenever (the
        allowlist, the pin's mode, ``readonly`` autonomy), or None: automation checks its rules
        and sensors with this before the agent starts."""
        return self._policy.refusal(board, pin, action)

    def supervised_tasks(self) -> list[SupervisedTask]:
        """The board supervisor (a resident agent's, once started)."""
        return [self._supervisor] if self._supervisor is not None else []

    def _check_oneshot(self, rule: Pin, on: bool) -> None:
        """Without a running agent, refuse what would not be true once this process exits
        (:func:`edge.hardware.holds.oneshot_refusal`)."""
        if not self.resident and (refusal := oneshot_refusal(
                rule, on=on, board_holds_levels=self.boards[rule.board].holds_levels,
                hold_seconds=self.hold_seconds)):
            raise BoardError(refusal)

    # the one door: name a pin and who asks; the policy, approvals and guards run here --------

    def hold_refusal(self, spec: str, seconds: float, *,
                     advice: str = "--hold {limit:g}") -> str | None:
        """Why holding the pin ``spec`` on for ``seconds`` cannot keep its promise (its
        ``max_on_seconds`` ends the on-time first), or None: the one check every door uses
        (``gpio write --hold``, the tools' ``hold_seconds``, an automation's ``for``, which
        passes ``advice="for {limit:g}s"``). Raises UnknownPin for an unknown pin."""
        rule = self.pins.get(self.locate(spec))
        return hold_refusal(rule, seconds, advice=advice) if rule is not None else None

    async def _permit(self, spec: str, action: Action, requester: Requester,
                      summary: str, value: float | None = None, *,
                      oneshot: bool | None = None, hold_seconds: float | None = None) -> Pin:
        """:meth:`_ask` and, for a change, the one-shot guards (``oneshot``: whether it turns
        the pin on) and the hold's (``hold_seconds``: how long the caller will hold what it
        sets); a refusal of a change is recorded (who, why) before it is raised."""
        try:
            rule = await self._ask(spec, action, requester, summary, value)
            if hold_seconds is None and not self.resident:
                hold_seconds = self.hold_seconds  # this command's own --hold
            if oneshot and hold_seconds is not None and (
                    refusal := hold_refusal(rule, hold_seconds)):
                log.warning("hold_refused board=%s pin=%s hold=%g max_on_seconds=%g by=%s",
                            rule.board, rule.pin, hold_seconds, rule.max_on_seconds or 0,
                            requester.caller)
                raise PolicyDenied(refusal)
            if oneshot is not None:
                self._check_oneshot(rule, oneshot)
            return rule
        except (PolicyDenied, BoardError) as exc:
            if action is not Action.READ:
                await self.outcomes.refused(self._known(spec), spec, action.value, value,
                                            requester, str(exc))
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
        return self.pins[(rule.board, rule.pin)]

    async def read(self, spec: str, requester: Requester) -> tuple[Pin, float]:
        """The pin's rule and logical value: 1 is on (a low line on an active-low pin); PWM pins
        report their duty, analog pins their fraction of the reference, and a servo the angle
        it was last turned to here (:meth:`value_of` says which)."""
        rule = await self._permit(spec, Action.READ, requester, "read {pin}")
        angle = self._meanings.angle(rule.board, rule.pin)
        return rule, angle if angle is not None else await self._read(rule)

    def value_of(self, rule: Pin, value: float) -> PinValue:
        """What ``value`` (from :meth:`read`) means on ``rule``: a level, a duty, a servo's
        angle, or an analog fraction (with the reading of the sensor that scales it, where
        that sensor gives a unit)."""
        return self._meanings.of(rule, value)

    async def write(self, spec: str, on: bool, requester: Requester, *,
                    hold_seconds: float | None = None) -> Pin:
        """Switch an output on or off (after the policy, approvals and one-shot guards);
        ``hold_seconds``: the caller holds it on that long (refused when the pin's
        ``max_on_seconds`` is shorter, :meth:`hold_refusal`)."""
        rule = await self._permit(spec, Action.WRITE, requester,
                                  "switch {pin} " + ("on" if on else "off"), float(on), oneshot=on,
                                  hold_seconds=hold_seconds)
        await self._switch(rule, spec, Action.WRITE, float(on), requester, on,
                           lambda: self.boards[rule.board].write(rule.pin, rule.line(on)))
        log.info("actuation board=%s pin=%s value=%s by=%s", rule.board, rule.pin,
                 "on" if on else "off", requester.caller)
        return rule

    async def pwm(self, spec: str, duty: float, frequency: float | None,
                  requester: Requester, *, hold_seconds: float | None = None) -> Pin:
        rule = await self._permit(spec, Action.PWM, requester,
                                  f"set {{pin}} PWM duty to {duty:.2f}", duty, oneshot=duty > 0,
                                  hold_seconds=hold_seconds)
        line_duty = 1.0 - duty if rule.active_low else duty
        await self._switch(rule, spec, Action.PWM, duty, requester, duty > 0,
                           lambda: self.boards[rule.board].pwm(rule.pin, line_duty, frequency))
        log.info("actuation board=%s pin=%s duty=%.3f frequency=%s by=%s",
                 rule.board, rule.pin, duty, frequency, requester.caller)
        return rule

    async def servo(self, spec: str, angle: float, requester: Requester) -> Pin:
        rule = await self._permit(spec, Action.SERVO, requester,
                                  f"turn the servo on {{pin}} to {angle:g} degrees", angle,
                                  oneshot=True)
        await self._switch(rule, spec, Action.SERVO, angle, requester, True,
                           lambda: self.boards[rule.board].servo(rule.pin, angle))
        log.info("actuation board=%s pin=%s servo=%g by=%s", rule.board, rule.pin, angle,
                 requester.caller)
        return rule

    async def make_safe(self, spec: str, requester: Requester) -> Pin:
        """Return an allowlisted output to its safe level (off when it has none): never refused
        by the pin's budget of switches or an interlock (it counts, though)."""
        rule = await self._permit(spec, Action.SAFE, requester, "return {pin} to its safe level")
        on = bool(rule.safe)
        await self._switch(rule, spec, Action.SAFE, float(on), requester, on,
                           lambda: self.boards[rule.board].write(rule.pin, rule.line(on)))
        log.info("safe_state board=%s pin=%s value=%s by=%s", rule.board, rule.pin,
                 "on" if on else "off", requester.caller)
        return rule

    async def _switch(self, rule: Pin, spec: str, action: Action, value: float,
                      requester: Requester, on: bool,
                      act: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """The interlocks' check, the act and the state it leaves, as one step against every
        other switch an interlock sees with ``rule`` (:mod:`edge.hardware.atomic`); a refusal is recorded
        (who, why) before it is raised."""
        async def step() -> None:
            if self.guard is not None and action is not Action.SAFE:
                await self._see_group(rule)
                try:
                    self.guard.check(rule, value)
                except PolicyDenied as exc:
                    await self.outcomes.refused(rule, spec, action.value, value, requester,
                                                str(exc))
                    raise
            self._meanings.driven(rule)  # a servo turns it again once done
            try:
                await self._actuate(rule, on, act())
            except BoardError as exc:
                await self.outcomes.failed(rule, action.value, value, requester, str(exc))
                raise
            if action is Action.SERVO:
                self._meanings.turned(rule, value)
            await self.outcomes.acted(rule, action.value, value, requester)
            self._events.output_changed(rule, value)

        await self._atomic.run((rule.board, rule.pin), step)

    async def _see_group(self, rule: Pin) -> None:
        """A one-shot command adopts the other outputs its interlocks see, at the level they
        have, so that the check counts them; one it cannot adopt (another process holds the
        line) stays unknown, and the check counts it as on."""
        if self.resident:
            return
        for key in self._atomic.members((rule.board, rule.pin)):
            other = self.pins[key]
            if other is not rule and self.boards[other.board].connected:
                try:
                    await self.claims.claim(other)
                except BoardError as exc:
                    log.info("interlock_unknown board=%s pin=%s error=%r", other.board,
                             other.pin, str(exc))

    async def _read(self, rule: Pin) -> float:
        if (not self.resident and rule.mode is not PinMode.INPUT
                and not self.boards[rule.board].holds_levels):
            raise BoardError(f"{rule.label} is an output and no agent is driving it: board "
                             f"{rule.board} keeps no level without one, so there is nothing "
                             "to read; start the agent (`edge-cli run`) and ask it")
        await self.claims.claim(rule)
        level = await self.boards[rule.board].read(rule.pin)
        return logical(rule, level)

    async def _actuate(self, rule: Pin, on: bool, act: Coroutine[Any, Any, None]) -> None:
        """Claim, arm the auto-off timer, then act; a cancelled caller (``/stop``, a newer
        message, the turn's timeout) neither interrupts the act half way on a serial link nor
        leaves an output on without its timer."""
        try:
            await self.claims.claim(rule)
        except BaseException:
            act.close()
            raise
        self._timers.arm(rule, on)
        await asyncio.shield(act)

    async def _auto_off(self, rule: Pin) -> None:
        """``max_on_seconds`` ran out: off, through the board, whoever switched it on (as one
        step against the switches its interlocks see)."""
        await self._atomic.run((rule.board, rule.pin), lambda: self._off(rule))

    async def _off(self, rule: Pin) -> None:
        self._policy.switches.force(rule.rule, 0.0)  # counted, never refused
        self._meanings.driven(rule)
        try:
            await self.boards[rule.board].write(rule.pin, rule.line(False))
            log.info("auto_off board=%s pin=%s after=%gs", rule.board, rule.pin, rule.max_on_seconds)
        except BoardError as exc:
            log.error("auto_off_failed board=%s pin=%s error=%r", rule.board, rule.pin, exc)
            await self.outcomes.failed(rule, "auto-off", 0.0, None, str(exc))
            return
        await self.outcomes.acted(rule, "auto-off", 0.0, None)
        self._events.output_changed(rule, 0.0)

    async def shutdown(self) -> None:
        """Cancel timers and release the boards; a resident agent first drives every claimed
        output to its safe level (a one-shot command leaves the level it was asked for)."""
        if self._supervisor:
            await self._supervisor.aclose()
            self._supervisor = None
        self._timers.cancel_all()
        await self._atomic.drain()
        await self.claims.release()
        self._meanings.forget()

    def pin_list(self) -> list[Pin]:
        """Every allowlisted pin with its facts, in config order."""
        return list(self.pins.values())

    def safe_levels(self, board: str) -> dict[str, bool]:
        """Each output's safe level on ``board`` as a line level (:func:`edge.hardware.claims.safe_levels`)."""
        return safe_levels(self.pins.values(), board)

    def subscribe(self, listener: BoardListener) -> Callable[[], None]:
        """Events from every board that reports them: input changes (logical values, like
        :meth:`read`), firmware watchdog trips, boards going down and coming back; and
        ``output`` after each actuation through this door or its timers (write, pwm, servo,
        make_safe, auto-off: 1/0, the duty or the angle), whoever asked. Listeners run on the
        event loop (:mod:`edge.hardware.board_events`)."""
        return self._events.subscribe(listener)

    def status(self) -> list[BoardStatus]:
        """Each board's status with pin values made logical (1 is on, whatever the wiring)."""
        statuses = []
        for board in self.boards.values():
            status = board.status()
            for state in status.pins:
                known = self.pins.get((status.name, state.name))
                if known is not None:
                    state.value = logical(known, state.value)
                angle = self._meanings.angle(status.name, state.name)
                state.value = state.value if angle is None else angle
            if status.simulated and status.name in self._details:
                status.detail = self._details[status.name]
            statuses.append(status)
        return statuses

    def events(self, last: int = RECENT_EVENTS_KEPT) -> list[dict[str, Any]]:
        """The most recent board events as plain data, newest last."""
        return self._events.rows(last)

