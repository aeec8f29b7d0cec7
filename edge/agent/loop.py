"""The bounded tool-call loop: at most ``max_iterations`` model rounds per turn.

Each round sends the history to the provider; tool calls are executed through their tools (which
check the policy) and their results appended. Providers without native tool calling speak the
prompt-guided ``<tool_call>`` protocol inside the provider layer (``edge.providers.prompt_guided``),
so the loop sees ordinary tool calls either way. With ``on_text`` the reply is streamed and the
text so far handed to it (channel drafts). Tool results are capped at ``result_limit`` characters
with a note of what was cut, so one large result cannot flood the context.
Cancellation (``/stop``, a newer message, the timeout) propagates into the running tool and the
provider request as CancelledError. A call the day's budget refuses
(:class:`~edge.agent.budget.BudgetSpent`) ends the turn with what it has: the model's text so far,
what its tools returned, and why it stopped.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import replace

from edge.agent.budget import BudgetSpent
from edge.core.messages import ChatMessage, ToolCall, ToolSpec
from edge.core.requester import Requester
from edge.providers.base import (
    ChatResponse,
    Provider,
    ProviderError,
    StreamDone,
    StreamInterrupted,
    TextDelta,
)
from edge.providers.prompt_guided import json_tool_calls, parse_tool_calls
from edge.tools.base import Tool, ToolResult, spec_of

log = logging.getLogger(__name__)

TOOL_RESULT_MAX_CHARS = 4_000
STOPPED_RESULT_CHARS = 200
"""How much of each tool result a turn stopped by the budget tells (on one line)."""
DEFAULT_MAX_TOOL_ITERATIONS = 10

TextSink = Callable[[str], Awaitable[None]]
"""Receives the reply text so far while it streams."""


def truncate(text: str, limit: int = TOOL_RESULT_MAX_CHARS) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[truncated {len(text) - limit} characters]"


async def execute_call(call: ToolCall, tools: dict[str, Tool], requester: Requester) -> ToolResult:
    tool = tools.get(call.name)
    if tool is None:
        return ToolResult(False, error=f"unknown tool {call.name!r}; available: {', '.join(tools)}")
    try:
        args = json.loads(call.arguments or "{}")
    except json.JSONDecodeError as exc:
        return ToolResult(False, error=f"arguments are not valid JSON: {exc.msg}")
    if not isinstance(args, dict):
        return ToolResult(False, error="arguments must be a JSON object")
    return await tool.execute(args, requester)


def stopped_by_budget(turn: list[ChatMessage], spent: BudgetSpent) -> str:
    """The reply of a turn whose next model call the budget refused: the model's text of the
    rounds done, each tool result in a line, and the refusal (alone, when nothing was done).

    >>> from edge.core.messages import ToolCall
    >>> print(stopped_by_budget([ChatMessage.assistant("Checking.", [ToolCall("1", "gpio_read", "{}")]),
    ...                          ChatMessage.tool("1", "led is on")], BudgetSpent("It is spent.")))
    Checking.
    <BLANKLINE>
    What the tools returned:
    - gpio_read: led is on
    <BLANKLINE>
    The model was not asked again. It is spent.
    """
    names = {call.id: call.name for m in turn for call in m.tool_calls}
    parts = [m.content.strip() for m in turn if m.role == "assistant" and m.content.strip()]
    results = []
    for m in turn:
        if m.role == "tool":
            line = " ".join(m.content.split())
            cut = "…" if len(line) > STOPPED_RESULT_CHARS else ""
            results.append(f"- {names.get(m.tool_call_id or '', 'a tool')}: "
                           f"{line[:STOPPED_RESULT_CHARS]}{cut}")
    if results:
        parts.append("What the tools returned:\n" + "\n".join(results))
    if not parts:  # refused before its first call (another chat of the person's holds the rest)
        return str(spent)
    parts.append(f"The model was not asked again. {spent}")
    return "\n\n".join(parts)


def calls_in_text(response: ChatResponse, tools: dict[str, Tool]) -> ChatResponse:
    """A reply whose text carries tool calls (``<tool_call>`` tags, or a bare or fenced JSON
    object naming one of ``tools``: how small local models often call) as those calls."""
    text, calls = parse_tool_calls(response.text)
    text, more = json_tool_calls(text, frozenset(tools))
    if not calls and not more:
        return response
    log.info("tool_calls_in_text tags=%d json=%d", len(calls), len(more))
    return replace(response, text=text, tool_calls=[*calls, *more])


async def _model_turn(provider: Provider, messages: list[ChatMessage], specs: list[ToolSpec],
                      on_text: TextSink | None) -> ChatResponse:
    if on_text is None:
        return await provider.chat(messages, tools=specs)
    shown = ""
    events = provider.stream(messages, tools=specs)
    try:
        async for event in events:
            if isinstance(event, TextDelta) and event.text:
                shown += event.text
                await on_text(shown)
            elif isinstance(event, StreamDone):
                return event.response
    except StreamInterrupted as exc:
        log.warning("stream_interrupted shown_chars=%d error=%s; asking again without streaming",
                    len(exc.partial_text), exc)
        return await provider.chat(messages, tools=specs)
    finally:  # however the turn ends (a /stop during a draft's edit): the connection is closed
        if isinstance(events, AsyncGenerator):  # and the call counted now, not when collected
            await events.aclose()
    raise ProviderError("the provider's stream ended without a final event")


async def run_tool_loop(provider: Provider, messages: list[ChatMessage], tools: list[Tool],
                        requester: Requester, max_iterations: int = DEFAULT_MAX_TOOL_ITERATIONS,
                        result_limit: int = TOOL_RESULT_MAX_CHARS,
                        specs: list[ToolSpec] | None = None, on_text: TextSink | None = None) -> str:
    """Model turns and tools until the model answers in text; ``messages`` grows in place.
    ``specs`` may be passed when the caller already has them."""
    by_name = {t.name: t for t in tools}
    specs = specs if specs is not None else [spec_of(t) for t in tools]
    started = len(messages)
    for _ in range(max_iterations):
        try:
            response = await _model_turn(provider, messages, specs, on_text)
        except BudgetSpent as spent:
            log.warning("turn_stopped_by_budget by=%s rounds_done=%d", requester.caller,
                        sum(m.role == "assistant" for m in messages[started:]))
            return stopped_by_budget(messages[started:], spent)
        if not response.tool_calls:
            response = calls_in_text(response, by_name)
        if not response.tool_calls:
            return response.text
        messages.append(ChatMessage.assistant(response.text, response.tool_calls))
        for call in response.tool_calls:
            result = await execute_call(call, by_name, requester)
            log.info("tool_call tool=%s success=%s by=%s", call.name, result.success,
                     requester.caller)
            messages.append(ChatMessage.tool(call.id, truncate(result.text, result_limit)))
    # not "I stopped": that reads as a claim of switching something (edge.agent.receipts)
    return (f"No final answer after {max_iterations} tool-call rounds (the limit); ask again "
            "more specifically.")
