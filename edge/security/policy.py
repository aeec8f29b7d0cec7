"""SecurityPolicy v1: a per-board pin allowlist with modes, safe levels and rate limits.

The policy, not the model, decides: every tool receives the policy at construction and
calls :meth:`SecurityPolicy.authorize` inside
``execute``. Anything not listed is refused, and every refusal is logged with who asked.

Two budgets limit actuations: each caller's (``[security] max_actuations_per_minute``), and each
output's own (``max_switches_per_minute`` on the pin, :class:`SwitchBudget`), which holds whoever
asks and through whichever door, so no mix of callers can wear out a relay.

>>> policy = SecurityPolicy([PinRule("gpio", "GPIO17", PinMode.OUTPUT)])
>>> policy.authorize("gpio", "GPIO17", Action.WRITE, Requester("cli", "me")).pin
'GPIO17'
"""

from __future__ import annotations

import enum
import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from edge.core.exc import PolicyDenied
from edge.core.ratelimit import RateLimiter, SlidingWindow
from edge.core.requester import Requester
from edge.security.approvals import ApprovalGate
from peripherals.base import PinMode

log = logging.getLogger(__name__)

RATE_WINDOW_SECONDS = 60.0


class Action(enum.StrEnum):
    READ = "read"
    WRITE = "write"
    PWM = "pwm"
    SERVO = "servo"
    SAFE = "safe"
    """Return an output to its safe level: always allowed on an allowlisted output, never
    rate-limited or held for approval (it is how a hold ends and how a person stops a pump)."""


ALLOWED_MODES = {
    Action.READ: frozenset(PinMode),
    Action.WRITE: frozenset({PinMode.OUTPUT, PinMode.PWM}),
    Action.PWM: frozenset({PinMode.PWM}),
    Action.SERVO: frozenset({PinMode.PWM}),  # a servo is driven by pulses on a pwm pin
    Action.SAFE: frozenset({PinMode.OUTPUT, PinMode.PWM}),
}


@dataclass(frozen=True)
class PinRule:
    """What is allowed on one pin: it is on the allowlist, in ``mode``, at most
    ``max_switches_per_minute`` changes a minute (None: no budget, as for inputs). The pin's
    physical facts (safe level, on-time limit, pull, wiring) live with the hardware
    (:class:`edge.hardware.Pin`); ``label`` names it in refusals (``gpio:GPIO17 (led)``)."""

    board: str
    pin: str
    mode: PinMode
    label: str = ""
    max_switches_per_minute: int | None = None
    approval: bool = True
    """False: actuations of this pin never wait for an approval (``approval = false``)."""

    def __post_init__(self) -> None:
        if not self.label:
            object.__setattr__(self, "label", f"{self.board}:{self.pin}")


class SwitchBudget:
    """Each output's own budget: at most ``max_switches_per_minute`` switches in any minute,
    whoever asks (chat, the model, edge-cli, MQTT, rules, schedules), all counted together.

    A switch is a change of the pin's value (on/off, a PWM duty, a servo angle) from the last
    one granted: asking for the value a pin already has moves no relay contact and is not
    counted (while the value is unknown, as in a one-shot command or after a board came back,
    every request counts). Going to the safe level (``gpio safe``, the ``max_on_seconds``
    timer) is never refused, but it is a switch and is counted.

    >>> budget = SwitchBudget()
    >>> relay = PinRule("gpio", "GPIO17", PinMode.OUTPUT, "gpio:GPIO17 (relay)", 2)
    >>> [budget.spend(relay, value) for value in (1.0, 1.0, 0.0)]
    [None, None, None]
    >>> print(budget.spend(relay, 1.0))
    gpio:GPIO17 (relay): switched 2 times in the last minute (max_switches_per_minute = 2); try again in 60 s
    """

    def __init__(self, rates: RateLimiter | None = None,
                 clock: Callable[[], float] = time.monotonic):
        """``rates``: where switches are counted; one-shot commands share a file."""
        self._rates = rates or SlidingWindow(RATE_WINDOW_SECONDS, clock=clock)
        self._values: dict[tuple[str, str], float] = {}

    def spend(self, rule: PinRule, value: float | None) -> str | None:
        """Count a switch of the pin to ``value`` (None: a value nobody can compare, counted);
        the refusal, if its budget is spent."""
        limit = rule.max_switches_per_minute
        if limit is None or self._unchanged(rule, value):
            return None
        name = f"{rule.board}:{rule.pin}"
        if not self._rates.take(name, limit):
            wait = max(1, math.ceil(self._rates.wait(name, limit)))
            return (f"{rule.label}: switched {self._rates.count(name)} times in the last minute "
                    f"(max_switches_per_minute = {limit}); try again in {wait} s")
        self.known(rule.board, rule.pin, value)
        return None

    def force(self, rule: PinRule, value: float | None) -> None:
        """A switch that must happen (the safe level, the auto-off timer): counted, never
        refused."""
        if rule.max_switches_per_minute is not None and not self._unchanged(rule, value):
            self._rates.take(f"{rule.board}:{rule.pin}", None)
        self.known(rule.board, rule.pin, value)

    def known(self, board: str, pin: str, value: float | None) -> None:
        """The pin holds ``value`` without a switch asked for (claimed at its safe level);
        None: nobody knows (a board that came back)."""
        if value is None:
            self._values.pop((board, pin), None)
        else:
            self._values[(board, pin)] = value

    def _unchanged(self, rule: PinRule, value: float | None) -> bool:
        return value is not None and self._values.get((rule.board, rule.pin)) == value


class SecurityPolicy:
    def __init__(self, rules: list[PinRule], max_actuations_per_minute: int = 30,
                 clock: Callable[[], float] = time.monotonic,
                 approvals: ApprovalGate | None = None, rates: RateLimiter | None = None,
                 switches: SwitchBudget | None = None):
        """``rates``: where actuations are counted; one-shot commands share a file
        (:class:`~edge.core.ratelimit.SharedWindow`) so that together they keep the same limit.
        ``switches``: each pin's own budget (one-shot commands share a file for it too)."""
        self._rules = {(r.board, r.pin): r for r in rules}
        self.max_actuations_per_minute = max_actuations_per_minute
        self.approvals = approvals or ApprovalGate(autonomy="full")
        self._rates = rates or SlidingWindow(RATE_WINDOW_SECONDS, clock=clock)
        self.switches = switches or SwitchBudget(clock=clock)

    @property
    def rules(self) -> list[PinRule]:
        return list(self._rules.values())

    def rule(self, board: str, pin: str) -> PinRule | None:
        return self._rules.get((board, pin))

    def _deny(self, reason: str, board: str, pin: str, action: Action,
              requester: Requester) -> PolicyDenied:
        log.warning("policy_refused board=%s pin=%s action=%s by=%s reason=%r",
                    board, pin, action.value, requester.caller, reason)
        return PolicyDenied(reason)

    def refusal(self, board: str, pin: str, action: Action) -> str | None:
        """Why ``action`` on the pin is refused whoever asks and whenever (the allowlist, the
        pin's mode, ``readonly`` autonomy), or None. Rate limits and approvals depend on the
        moment and are decided when it happens. Automation checks its rules with this before
        the agent starts."""
        rule = self._rules.get((board, pin))
        if rule is None:
            return (f"{board}:{pin} is not in the allowlist; add it under "
                    f"[boards.{board}.pins] in the config to allow it")
        if rule.mode not in ALLOWED_MODES[action]:
            return (f"{rule.label} is configured as {rule.mode.value}, "
                    f"which does not allow {action.value}")
        if self.approvals.autonomy == "readonly" and action not in (Action.READ, Action.SAFE):
            return ("autonomy is readonly: nothing may actuate pins; set [security] autonomy = "
                    "\"supervised\" or \"full\" to allow it")
        return None

    def authorize(self, board: str, pin: str, action: Action, requester: Requester) -> PinRule:
        """The rule that allows ``action``; raises PolicyDenied (and logs) otherwise."""
        reason = self.refusal(board, pin, action)
        if reason is not None:
            raise self._deny(reason, board, pin, action, requester)
        rule = self._rules[(board, pin)]
        if action not in (Action.READ, Action.SAFE):
            self._take_rate_slot(rule, action, requester)
        return rule

    async def permit(self, board: str, pin: str, action: Action, requester: Requester,
                     summary: str, value: float | None = None) -> PinRule:
        """:meth:`authorize`, then for actuations the approval gate (which may ask a person),
        then the pin's own budget for a switch to ``value`` (its logical value: 1/0, a duty, an
        angle). The safe level is counted but never refused."""
        rule = self.authorize(board, pin, action, requester)
        if action is Action.SAFE:
            self.switches.force(rule, value)
        if action in (Action.READ, Action.SAFE):
            return rule
        refusal = (await self.approvals.check(f"{board}:{pin}", action.value, summary, requester)
                   if rule.approval else None)
        if refusal is not None:
            raise self._deny(f"{rule.label}: {refusal}", board, pin, action, requester)
        if (spent := self.switches.spend(rule, value)) is not None:
            raise self._deny(spent, board, pin, action, requester)
        return rule

    def _take_rate_slot(self, rule: PinRule, action: Action, requester: Requester) -> None:
        limit, caller = self.max_actuations_per_minute, requester.caller
        if not self._rates.take(caller, limit):
            raise self._deny(f"rate limit: {caller} made {self._rates.count(caller)} actuations "
                             f"in the last minute (limit {limit}); try again shortly",
                             rule.board, rule.pin, action, requester)
