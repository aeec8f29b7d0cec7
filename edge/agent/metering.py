"""What one model call costs, measured around the turn's provider (:class:`MeteredProvider`).

Before each call an estimate is reserved with the :class:`~edge.agent.budget.TokenBudget`: the
whole request as it would be sent (the messages and the tool schemas, as JSON) at about four
characters a token (:func:`request_tokens`), plus the budget's allowance for the reply. A spent
budget refuses the call (:class:`~edge.agent.budget.BudgetSpent`) and the provider is not asked.
A call that answers is settled with the provider's own usage figures, or, where it reports none,
with the request's estimate and the reply's own length (:func:`answered_tokens`); a call that is
cancelled, fails or is cut mid-stream keeps its reservation.

>>> from edge.providers.base import Usage
>>> request_tokens([ChatMessage.user("x" * 400)], [ToolSpec("pins", "d" * 400, {})]) > 200
True
>>> answered_tokens(120, ChatResponse("y" * 8, usage=Usage(11, 7)))
18
>>> answered_tokens(120, ChatResponse("y" * 8))
122
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence

from edge.agent.budget import TokenBudget
from edge.agent.context import CHARS_PER_TOKEN
from edge.core.messages import ChatMessage, ToolSpec
from edge.providers.base import ChatResponse, Provider, StreamDone, StreamEvent


def _tokens(chars: int) -> int:
    return max(1, -(-chars // CHARS_PER_TOKEN))


def request_tokens(messages: Sequence[ChatMessage], tools: Sequence[ToolSpec] | None) -> int:
    """The request's size in tokens, estimated over its JSON: every message (content, tool calls,
    the ids they answer) and every tool's name, description and parameter schema."""
    wire = [{"role": m.role, "content": m.content, "tool_call_id": m.tool_call_id,
             "tool_calls": [[c.id, c.name, c.arguments] for c in m.tool_calls]}
            for m in messages]
    schemas = [{"name": t.name, "description": t.description, "parameters": t.parameters}
               for t in tools or ()]
    return _tokens(len(json.dumps([wire, schemas], ensure_ascii=False, separators=(",", ":"))))


def answered_tokens(request: int, response: ChatResponse) -> int:
    """The answered call's tokens: the provider's figures (input + output), else the request's
    estimate and ~4 characters a token over the reply."""
    reported = response.usage.input_tokens + response.usage.output_tokens
    if reported > 0:
        return reported
    chars = len(response.text) + sum(len(c.name) + len(c.arguments) for c in response.tool_calls)
    return request + _tokens(chars)


class MeteredProvider(Provider):
    """Wraps the turn's provider: every call is reserved for ``person`` before it is made and
    counted however it ends."""

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
        request = request_tokens(messages, tools)
        reservation = self.budget.reserve(self.person, request + self.budget.reply_allowance)
        try:
            response = await self.inner.chat(messages, tools, model=model)
        except BaseException:  # cancelled or failed: it was sent, and may have cost
            self.budget.keep(reservation)
            raise
        await self.budget.settle(reservation, answered_tokens(request, response))
        return response

    async def stream(self, messages: Sequence[ChatMessage], tools: list[ToolSpec] | None = None,
                     *, model: str | None = None) -> AsyncIterator[StreamEvent]:
        request = request_tokens(messages, tools)
        reservation = self.budget.reserve(self.person, request + self.budget.reply_allowance)
        try:
            async for event in self.inner.stream(messages, tools, model=model):
                if isinstance(event, StreamDone):
                    await self.budget.settle(reservation, answered_tokens(request, event.response))
                yield event
        finally:  # stopped, cut or failed before the end: the estimate stays counted
            self.budget.keep(reservation)

    def is_context_overflow(self, error: Exception) -> bool:
        return self.inner.is_context_overflow(error)

    def rotate_key(self) -> bool:
        return self.inner.rotate_key()
