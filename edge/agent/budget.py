"""The daily spend cap on the model: ``[provider] daily_token_budget`` for the agent and
``per_user_daily_tokens`` for each person, counted per model call and kept across restarts.

Every model call is counted, whatever becomes of it. Before it, an estimate is reserved for the
person and the agent (:meth:`TokenBudget.reserve`, the whole request and an allowance for the reply:
:mod:`edge.agent.metering`); check and reservation are one step on the event loop, so a person's
concurrent chats see each other's calls in flight. A call that answers settles its reservation with
the provider's own usage figures (:meth:`TokenBudget.settle`); one cancelled (``/stop``, a newer
message, the timeout), failed or cut mid-stream keeps its estimate (:meth:`TokenBudget.keep`): it
was sent and may have cost. The count lives in a small ledger, ``<state>/token-usage.json`` (0600,
written atomically off the event loop after each call): the local date, the agent's total, each
person's total and which admin notices were sent. The day ends at local midnight: the first look
after it starts a fresh ledger.

A call is refused when the agent's or the person's count, calls in flight included, has reached
its budget: so nobody passes a budget by more than one call. :meth:`TokenBudget.refusal` gives
the reply (how much was used, the budget, when it resets); a turn refused before its first call
is answered with it, one refused mid-way ends with what it has and says so
(:class:`BudgetSpent`). Commands, rules, schedules and interlocks never pass through here.
Admins are told once at 80 % and once at 100 % of the agent's budget.

>>> import asyncio, tempfile, pathlib
>>> from datetime import datetime
>>> budget = TokenBudget(BudgetLimits(agent=100), pathlib.Path(tempfile.mkdtemp()) / "t.json",
...                      now=lambda: datetime(2026, 11, 26, 12, 0))
>>> first = budget.reserve("telegram:42", 90)
>>> second = budget.reserve("telegram:42", 90)  # 90 held, under 100: one more call may start
>>> budget.reserve("telegram:42", 90)
Traceback (most recent call last):
...
edge.agent.budget.BudgetSpent: Today's model budget is spent: 180 of 100 tokens used (180 of \
them held by calls still running). It resets at 00:00 (local midnight); commands such as /status \
and /gpio still work.
>>> asyncio.run(budget.settle(first, 30))  # the wire said 30
>>> budget.used(), budget.reserved()
(30, 90)
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from edge.core.exc import EdgeError
from edge.core.files import write_json_atomically

log = logging.getLogger(__name__)

LEDGER_NAME = "token-usage.json"
THRESHOLDS = (80, 100)
"""Percentages of the agent's budget at which the admins are told, once each a day."""
RESETS_AT = "00:00"
REPLY_ALLOWANCE_TOKENS = 1_000
"""What a call reserves for its reply when ``[provider] max_tokens`` is not set (about 4,000
characters: a long chat answer, or several tool calls)."""

Notify = Callable[[str], Awaitable[object]]
"""Sends a notice to the admins (the automation's notifier, target ``admins``)."""


def local_now() -> datetime:
    return datetime.now().astimezone()


class BudgetSpent(EdgeError):
    """A model call was refused: the agent's or the person's budget for today is spent. The
    message is the reply to give (how much was used, the budget, when it resets)."""


@dataclass(frozen=True)
class BudgetLimits:
    agent: int | None = None
    """Tokens a day for the whole agent; None: no cap."""
    per_user: int | None = None
    """Tokens a day for each person (``channel:sender``); None: no cap."""


@dataclass
class Reservation:
    """One model call's estimate, held for ``person`` from before the call until it is settled
    with the wire's figures or kept as it is."""

    person: str
    tokens: int
    open: bool = True


@dataclass
class Ledger:
    day: str
    agent: int = 0
    people: dict[str, int] = field(default_factory=dict)
    notified: list[int] = field(default_factory=list)
    """The thresholds (percent of the agent's budget) the admins were told of today."""

    def as_dict(self) -> dict[str, Any]:
        return {"day": self.day, "agent": self.agent, "people": dict(self.people),
                "notified": list(self.notified)}


class TokenBudget:
    """Counts the model's tokens per local day, holds the calls in flight, and refuses a call
    when a budget is spent."""

    def __init__(self, limits: BudgetLimits, path: Path, *, notify: Notify | None = None,
                 now: Callable[[], datetime] = local_now, reply_allowance: int | None = None):
        """``reply_allowance``: the tokens reserved for each call's reply (``[provider]
        max_tokens``; default :data:`REPLY_ALLOWANCE_TOKENS`)."""
        self.limits, self.path, self.notify, self.now = limits, path, notify, now
        self.reply_allowance = reply_allowance or REPLY_ALLOWANCE_TOKENS
        self._ledger = self._load()
        self._open: list[Reservation] = []
        self._writing = asyncio.Lock()
        self._publishing: set[asyncio.Task[None]] = set()

    def _today(self) -> str:
        return self.now().date().isoformat()

    def _load(self) -> Ledger:
        today = self._today()
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return Ledger(today)
        except (OSError, ValueError) as exc:
            log.warning("token_ledger_unreadable path=%s error=%r; starting at 0", self.path, str(exc))
            return Ledger(today)
        if not isinstance(data, dict) or data.get("day") != today:
            return Ledger(today)
        people = data.get("people")
        notified = data.get("notified")
        return Ledger(today, int(data.get("agent") or 0),
                      {str(k): int(v) for k, v in people.items()} if isinstance(people, dict) else {},
                      [int(n) for n in notified] if isinstance(notified, list) else [])

    @property
    def ledger(self) -> Ledger:
        """Today's ledger; a new local day starts it afresh."""
        if self._ledger.day != self._today():
            log.info("token_budget_reset day=%s", self._today())
            self._ledger = Ledger(self._today())
        return self._ledger

    def used(self, person: str | None = None) -> int:
        """Tokens counted today (calls answered, and calls ended without an answer at their
        estimate), for the agent or ``person``; calls in flight are :meth:`reserved`."""
        ledger = self.ledger
        return ledger.agent if person is None else ledger.people.get(person, 0)

    def reserved(self, person: str | None = None) -> int:
        """Tokens held by calls in flight, the agent's or ``person``'s (a call in flight at
        midnight holds, and is counted, in the new day)."""
        return sum(r.tokens for r in self._open if person is None or r.person == person)

    def refusal(self, person: str) -> str | None:
        """The reply to a model turn when the agent's or ``person``'s budget is spent (calls in
        flight included), else None."""
        spent = self._spent(person)
        if spent is None:
            return None
        whose, counted, held, budget = spent
        log.warning("token_budget_spent by=%s budget=%s used=%d in_flight=%d limit=%d", person,
                    whose, counted, held, budget)
        opening = ("Your model budget for today" if whose == "person"
                   else "Today's model budget")
        flight = f" ({held} of them held by calls still running)" if held else ""
        return (f"{opening} is spent: {counted} of {budget} tokens used{flight}. It resets at "
                f"{RESETS_AT} (local midnight); commands such as /status and /gpio still work.")

    def _spent(self, person: str) -> tuple[str, int, int, int] | None:
        for whose, key, limit in (("agent", None, self.limits.agent),
                                  ("person", person, self.limits.per_user)):
            if limit is None:
                continue
            held = self.reserved(key)
            if self.used(key) + held >= limit:
                return whose, self.used(key) + held, held, limit
        return None

    def reserve(self, person: str, tokens: int) -> Reservation:
        """Hold ``tokens`` for one call of ``person``'s, or raise :class:`BudgetSpent` when the
        agent's or the person's count (calls in flight included) has reached its budget. Check
        and hold are one step (no await between them): concurrent calls see each other."""
        refusal = self.refusal(person)
        if refusal is not None:
            raise BudgetSpent(refusal)
        reservation = Reservation(person, max(1, tokens))
        self._open.append(reservation)
        return reservation

    async def settle(self, reservation: Reservation, tokens: int) -> None:
        """The call answered: count ``tokens`` (the wire's figures) in place of its estimate."""
        crossed = self._close(reservation, tokens)
        if reservation.tokens != tokens:
            log.info("tokens_settled by=%s reserved=%d used=%d", reservation.person,
                     reservation.tokens, tokens)
        await self._publish(reservation.person, tokens, crossed)

    def keep(self, reservation: Reservation) -> list[int]:
        """The call ended without an answer (cancelled, failed, cut mid-stream): its estimate
        stays counted. Synchronous, for a ``finally`` of a cancelled task; the ledger is written
        and the admins told in the background. Returns the thresholds crossed."""
        if not reservation.open:
            return []
        crossed = self._close(reservation, reservation.tokens)
        log.info("tokens_kept by=%s tokens=%d (the call ended without an answer)",
                 reservation.person, reservation.tokens)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # a stream finalised after its loop: counted in memory
            return crossed
        task = loop.create_task(self._publish(reservation.person, reservation.tokens, crossed))
        self._publishing.add(task)
        task.add_done_callback(self._publishing.discard)
        return crossed

    def _close(self, reservation: Reservation, tokens: int) -> list[int]:
        if not reservation.open:
            return []
        reservation.open = False
        self._open.remove(reservation)
        return self._count(reservation.person, tokens)

    def _count(self, person: str, tokens: int) -> list[int]:
        ledger = self.ledger
        ledger.agent += tokens
        ledger.people[person] = ledger.people.get(person, 0) + tokens
        if self.limits.agent is None:
            return []
        crossed = [t for t in THRESHOLDS
                   if t not in ledger.notified and ledger.agent * 100 >= t * self.limits.agent]
        ledger.notified += crossed
        return crossed

    async def record(self, person: str, tokens: int) -> None:
        """Count ``tokens`` for ``person`` outside any reservation, then write and tell."""
        await self._publish(person, tokens, self._count(person, tokens))

    async def _publish(self, person: str, tokens: int, crossed: list[int]) -> None:
        """Write the ledger off the event loop (the write fsyncs; one write at a time, each of
        the newest figures), then tell the admins of the thresholds crossed. Never raises."""
        async with self._writing:
            try:
                await asyncio.to_thread(write_json_atomically, self.path, self.ledger.as_dict())
            except OSError as exc:  # counted in memory all the same; the turn is not failed
                log.error("token_ledger_write_failed path=%s error=%r", self.path, str(exc))
        log.info("tokens_used by=%s tokens=%d today=%d", person, tokens, self.used())
        if crossed and self.limits.agent:
            await self._tell(max(crossed), self.used(), self.limits.agent)

    async def _tell(self, threshold: int, used: int, cap: int) -> None:
        """One notice for the highest threshold a count crossed: ``used`` of ``cap`` and the
        share those two make (a call settled past the cap: ``30 of today's 20 tokens (150 %)``)."""
        text = (f"The model has used {used} of today's {cap} tokens ({used * 100 // cap} %)"
                + (": model turns are refused until the budget resets at "
                   f"{RESETS_AT}; commands, rules and schedules still work."
                   if threshold >= 100 else "."))
        log.warning("token_budget_threshold percent=%d used=%d budget=%d", threshold, used, cap)
        if self.notify is not None:
            try:
                await self.notify(text)
            except Exception as exc:  # a notice that cannot be sent must not fail the turn
                log.error("token_budget_notify_failed error=%r", str(exc))

    async def flush(self) -> None:
        """Wait for the ledger writes and notices of calls kept in the background."""
        while self._publishing:
            await asyncio.gather(*list(self._publishing), return_exceptions=True)

    def today(self) -> dict[str, Any]:
        """Today's use, for status and ``edge-cli models``."""
        ledger = self.ledger
        return {"day": ledger.day, "used": ledger.agent, "budget": self.limits.agent,
                "per_user_budget": self.limits.per_user, "people": dict(ledger.people),
                "resets_at": RESETS_AT}


def budget_from_config(daily_token_budget: int | None, per_user_daily_tokens: int | None,
                       state_dir: Path, notify: Notify | None = None,
                       reply_allowance: int | None = None) -> TokenBudget | None:
    """The budget for ``[provider]``, or None when it sets no cap; ``reply_allowance``: its
    ``max_tokens``."""
    if daily_token_budget is None and per_user_daily_tokens is None:
        return None
    return TokenBudget(BudgetLimits(daily_token_budget, per_user_daily_tokens),
                       state_dir / LEDGER_NAME, notify=notify, reply_allowance=reply_allowance)
