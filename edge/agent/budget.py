"""The daily spend cap on the model: ``[provider] daily_token_budget`` for the agent and
``per_user_daily_tokens`` for each person, counted per model call and kept across restarts.

Tokens are the provider's own usage figures (input + output) for every call of a turn, tool
rounds and compaction included; a provider that reports none is estimated at about four
characters a token over the prompt and the reply (:func:`tokens_of`). The count lives in a small
ledger, ``<state>/token-usage.json`` (0600, written atomically after each call): the local date,
the agent's total, each person's total and which admin notices were sent. The day ends at local
midnight: the first look after it starts a fresh ledger.

When a budget is spent, :meth:`TokenBudget.refusal` gives the reply for a model turn (how much was
used, the budget, when it resets) and the model is not called; commands, rules, schedules and
interlocks never pass through here. Admins are told once at 80 % and once at 100 % of the agent's
budget.

>>> import tempfile, pathlib
>>> from datetime import datetime
>>> budget = TokenBudget(BudgetLimits(agent=100), pathlib.Path(tempfile.mkdtemp()) / "t.json",
...                      now=lambda: datetime(2026, 11, 26, 12, 0))
>>> budget.add("telegram:42", 120)
[80, 100]
>>> print(budget.refusal("telegram:42"))
Today's model budget is spent: 120 of 100 tokens used. It resets at 00:00 (local midnight); \
commands such as /status and /gpio still work.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from edge.core.files import write_json_atomically
from edge.core.messages import ChatMessage, ToolSpec
from edge.providers.base import ChatResponse, Provider, StreamDone, StreamEvent

log = logging.getLogger(__name__)

LEDGER_NAME = "token-usage.json"
CHARS_PER_TOKEN = 4
"""The estimate for a provider that reports no usage: about four characters a token."""
THRESHOLDS = (80, 100)
"""Percentages of the agent's budget at which the admins are told, once each a day."""
RESETS_AT = "00:00"

Notify = Callable[[str], Awaitable[object]]
"""Sends a notice to the admins (the automation's notifier, target ``admins``)."""


def local_now() -> datetime:
    return datetime.now().astimezone()


def tokens_of(messages: Sequence[ChatMessage], response: ChatResponse) -> int:
    """The call's tokens: the provider's figures, else ~4 characters a token over prompt + reply.

    >>> from edge.providers.base import Usage
    >>> tokens_of([ChatMessage.user("x" * 40)], ChatResponse("y" * 8, usage=Usage(11, 7)))
    18
    >>> tokens_of([ChatMessage.user("x" * 40)], ChatResponse("y" * 8))
    12
    """
    reported = response.usage.input_tokens + response.usage.output_tokens
    if reported > 0:
        return reported
    chars = sum(len(m.content) + sum(len(c.arguments) for c in m.tool_calls) for m in messages)
    chars += len(response.text) + sum(len(c.name) + len(c.arguments) for c in response.tool_calls)
    return max(1, -(-chars // CHARS_PER_TOKEN))


@dataclass(frozen=True)
class BudgetLimits:
    agent: int | None = None
    """Tokens a day for the whole agent; None: no cap."""
    per_user: int | None = None
    """Tokens a day for each person (``channel:sender``); None: no cap."""


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
    """Counts the model's tokens per local day and says when a budget is spent."""

    def __init__(self, limits: BudgetLimits, path: Path, *, notify: Notify | None = None,
                 now: Callable[[], datetime] = local_now):
        self.limits, self.path, self.notify, self.now = limits, path, notify, now
        self._ledger = self._load()
        self._writing = asyncio.Lock()

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
        ledger = self.ledger
        return ledger.agent if person is None else ledger.people.get(person, 0)

    def refusal(self, person: str) -> str | None:
        """The reply to a model turn when the agent's or ``person``'s budget is spent, else None."""
        spent = self._spent(person)
        if spent is None:
            return None
        whose, used, budget = spent
        log.warning("token_budget_spent by=%s budget=%s used=%d limit=%d", person, whose, used, budget)
        opening = ("Your model budget for today" if whose == "person"
                   else "Today's model budget")
        return (f"{opening} is spent: {used} of {budget} tokens used. It resets at {RESETS_AT} "
                "(local midnight); commands such as /status and /gpio still work.")

    def _spent(self, person: str) -> tuple[str, int, int] | None:
        if self.limits.agent is not None and self.used() >= self.limits.agent:
            return "agent", self.used(), self.limits.agent
        if self.limits.per_user is not None and self.used(person) >= self.limits.per_user:
            return "person", self.used(person), self.limits.per_user
        return None

    def add(self, person: str, tokens: int) -> list[int]:
        """Count ``tokens`` for ``person`` and the agent and write the ledger; returns the
        thresholds (percent of the agent's budget) crossed for the first time today."""
        crossed = self._count(person, tokens)
        write_json_atomically(self.path, self.ledger.as_dict())
        return crossed

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
        """Count on the event loop, write off it (the write fsyncs; one write at a time, each of
        the newest figures), then tell the admins."""
        crossed = self._count(person, tokens)
        async with self._writing:
            try:
                await asyncio.to_thread(write_json_atomically, self.path, self.ledger.as_dict())
            except OSError as exc:  # counted in memory all the same; the turn is not failed
                log.error("token_ledger_write_failed path=%s error=%r", self.path, str(exc))
        log.info("tokens_used by=%s tokens=%d today=%d", person, tokens, self.used())
        for percent in crossed:
            text = (f"The model has used {self.used()} of today's {self.limits.agent} tokens "
                    f"({percent} %)" + (": model turns are refused until the budget resets at "
                                        f"{RESETS_AT}; commands, rules and schedules still work."
                                        if percent >= 100 else "."))
            log.warning("token_budget_threshold percent=%d used=%d", percent, self.used())
            if self.notify is not None:
                try:
                    await self.notify(text)
                except Exception as exc:  # a notice that cannot be sent must not fail the turn
                    log.error("token_budget_notify_failed error=%r", str(exc))

    def today(self) -> dict[str, Any]:
        """Today's use, for status and ``edge-cli models``."""
        ledger = self.ledger
        return {"day": ledger.day, "used": ledger.agent, "budget": self.limits.agent,
                "per_user_budget": self.limits.per_user, "people": dict(ledger.people),
                "resets_at": RESETS_AT}

    def meter(self, provider: Provider, person: str) -> MeteredProvider:
        return MeteredProvider(provider, self, person)


def budget_from_config(daily_token_budget: int | None, per_user_daily_tokens: int | None,
                       state_dir: Path, notify: Notify | None = None) -> TokenBudget | None:
    """The budget for ``[provider]``, or None when it sets no cap."""
    if daily_token_budget is None and per_user_daily_tokens is None:
        return None
    return TokenBudget(BudgetLimits(daily_token_budget, per_user_daily_tokens),
                       state_dir / LEDGER_NAME, notify=notify)


class MeteredProvider(Provider):
    """Wraps the turn's provider: every answered call is counted for ``person``."""

    def __init__(self, inner: Provider, budget: TokenBudget, person: str):
        self.inner, self.budget, self.person = inner, budget, person

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def model(self) -> str:
        return self.inner.model

    async def chat(self, messages: Sequence[ChatMessage], tools: list[ToolSpec] | None = None,
                   *, model: str | None = None) -> ChatResponse:
        response = await self.inner.chat(messages, tools, model=model)
        await self.budget.record(self.person, tokens_of(messages, response))
        return response

    async def stream(self, messages: Sequence[ChatMessage], tools: list[ToolSpec] | None = None,
                     *, model: str | None = None) -> AsyncIterator[StreamEvent]:
        async for event in self.inner.stream(messages, tools, model=model):
            if isinstance(event, StreamDone):
                await self.budget.record(self.person, tokens_of(messages, event.response))
            yield event

    def is_context_overflow(self, error: Exception) -> bool:
        return self.inner.is_context_overflow(error)

    def rotate_key(self) -> bool:
        return self.inner.rotate_key()
