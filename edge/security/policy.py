"""SecurityPolicy v1: a per-board pin allowlist with modes, safe levels and rate limits.

The policy, not the model, decides: every tool receives the policy at construction and
calls :meth:`SecurityPolicy.authorize` inside
``execute``. Anything not listed is refused, and every refusal is logged with who asked.

>>> policy = SecurityPolicy([PinRule("gpio", "GPIO17", PinMode.OUTPUT)])
>>> policy.authorize("gpio", "GPIO17", Action.WRITE, Requester("cli", "me")).pin
'GPIO17'
"""

from __future__ import annotations

import enum
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from edge.exc import PolicyDenied
from edge.ratelimit import RateLimiter, SlidingWindow
from edge.requester import Requester
from edge.security.approvals import ApprovalGate
from peripherals.base import PinMode

log = logging.getLogger(__name__)

RATE_WINDOW_SECONDS = 60.0


class Action(str, enum.Enum):
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
    """What is allowed on one pin: it is on the allowlist, in ``mode``. The pin's physical facts
    (safe level, on-time limit, pull, wiring) live with the hardware (:class:`edge.hardware.Pin`);
    ``label`` names it in refusals (``gpio:GPIO17 (led)``)."""

    board: str
    pin: str
    mode: PinMode
    label: str = ""

    def __post_init__(self) -> None:
        if not self.label:
            object.__setattr__(self, "label", f"{self.board}:{self.pin}")


class SecurityPolicy:
    def __init__(self, rules: list[PinRule], max_actuations_per_minute: int = 30,
                 clock: Callable[[], float] = time.monotonic,
                 approvals: ApprovalGate | None = None, rates: RateLimiter | None = None):
        """``rates``: where actuations are counted; one-shot commands share a file
        (:class:`~edge.ratelimit.SharedWindow`) so that together they keep the same limit."""
        self._rules = {(r.board, r.pin): r for r in rules}
        self.max_actuations_per_minute = max_actuations_per_minute
        self.approvals = approvals or ApprovalGate(autonomy="full")
        self._rates = rates or SlidingWindow(RATE_WINDOW_SECONDS, clock=clock)

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
                     summary: str) -> PinRule:
        """:meth:`authorize`, then for actuations the approval gate (which may ask a person)."""
        rule = self.authorize(board, pin, action, requester)
        if action not in (Action.READ, Action.SAFE):
            refusal = await self.approvals.check(f"{board}:{pin}", action.value, summary, requester)
            if refusal is not None:
                raise self._deny(f"{rule.label}: {refusal}", board, pin, action, requester)
        return rule

    def _take_rate_slot(self, rule: PinRule, action: Action, requester: Requester) -> None:
        limit, caller = self.max_actuations_per_minute, requester.caller
        if not self._rates.take(caller, limit):
            raise self._deny(f"rate limit: {caller} made {self._rates.count(caller)} actuations "
                             f"in the last minute (limit {limit}); try again shortly",
                             rule.board, rule.pin, action, requester)
