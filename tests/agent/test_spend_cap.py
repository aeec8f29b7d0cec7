"""The spend cap counts every model call, each test doing what an attack on it did (issue 37):
calls cancelled by /stop, by a newer message or mid-stream keep their estimate; the cap is
checked before every call, across a person's concurrent chats and inside a tool loop; a provider
that reports no usage is estimated with the tool schemas it was sent. Each test holds the two
invariants: the count never falls below the calls made, and nobody passes a budget by more than
one call's reservation. The model is the real OpenAI-compatible provider over loopback HTTP."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from edge.agent.budget import LEDGER_NAME, BudgetLimits, TokenBudget
from edge.agent.dispatch import Dispatcher
from edge.agent.pipeline import Agent
from edge.channels.base import Channel, ChannelMessage, SendMessage
from edge.core.requester import Requester
from edge.providers.openai import OpenAICompatibleProvider
from edge.tools.base import ToolResult
from tests.fakes.openai_server import OpenAIServer, Reply, completion
from tests.helpers import msg, until

MakeAgent = Callable[..., Agent]
CALL_TOKENS = 600
"""What the loopback model reports for each answered call (540 prompt + 60 completion)."""
STOP = "/stop"


def answer(text: str | None = "done", tool_calls: list[dict[str, Any]] | None = None,
           usage: bool = True) -> Reply:
    body = completion(text, tool_calls)
    if usage:
        body["usage"] = {"prompt_tokens": 540, "completion_tokens": 60, "total_tokens": 600}
    else:
        del body["usage"]
    return 200, body


def slow(seconds: float, text: str = "late") -> Callable[[dict[str, Any]], Reply]:
    """A model that takes ``seconds`` to answer ``text`` (in the server's thread)."""
    def respond(body: dict[str, Any]) -> Reply:
        time.sleep(seconds)
        return answer(text)

    return respond


def read_led(body: dict[str, Any]) -> Reply:
    """A model that always asks for one more tool call."""
    return answer(None, [{"name": "gpio_read", "arguments": {"pin": "led"}}])


def least_estimate(body: dict[str, Any], allowance: int) -> int:
    """A lower bound of what a call sending ``body`` reserves: the reply's allowance and its
    messages' text at four characters a token (the JSON around them and the schemas only add)."""
    return allowance + sum(len(m.get("content") or "") for m in body["messages"]) // 4


def with_budget(agent: Agent, tmp_path: Path, /, **limits: int) -> TokenBudget:
    agent.budget = TokenBudget(BudgetLimits(**limits), tmp_path / LEDGER_NAME)
    return agent.budget


def kept(caplog: pytest.LogCaptureFixture) -> list[int]:
    """The estimates kept by calls that ended without an answer, as the log tells them."""
    return [int(m[1]) for r in caplog.records
            if (m := re.match(r"tokens_kept by=\S+ tokens=(\d+)", r.getMessage()))]


class ChatWindow(Channel):
    """A chat channel; with ``drafts`` it shows streamed replies as a draft, like Telegram's."""

    name = "cli"

    def __init__(self, drafts: bool = True) -> None:
        self.stream_drafts = drafts
        self.sent: list[str] = []
        self.drafts: list[str] = []

    async def listen(self, bus: asyncio.Queue[ChannelMessage]) -> None:
        return None

    async def send(self, message: SendMessage) -> None:
        self.sent.append(message.content)

    async def health_check(self) -> bool:
        return True

    async def send_draft(self, message: SendMessage) -> str:
        self.drafts.append(message.content)
        return "draft-1"

    async def update_draft(self, recipient: str, message_id: str, text: str) -> None:
        await asyncio.sleep(0.05)  # an edit's round trip
        self.drafts.append(text)

    async def finalize_draft(self, recipient: str, message_id: str, text: str) -> None:
        self.sent.append(text)


@asynccontextmanager
async def dispatching(agent: Agent, channel: Channel) -> AsyncIterator[Dispatcher]:
    dispatcher = Dispatcher(agent, {"cli": channel}, debounce_seconds=0.0)
    task = asyncio.create_task(dispatcher.run())
    try:
        yield dispatcher
        await dispatcher.drain()
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def test_turns_stopped_mid_call_keep_their_estimates(make_agent: MakeAgent, tmp_path: Path,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "edge.agent.budget")
    channel = ChatWindow(drafts=False)  # one request, one answer: stopped while it is awaited
    with OpenAIServer(responder=slow(5.0)) as server:
        provider = OpenAICompatibleProvider(server.base_url, "m")
        agent = make_agent(provider)
        budget = with_budget(agent, tmp_path, per_user=10_000_000)
        async with dispatching(agent, channel) as dispatcher:
            for turn in range(6):
                await dispatcher.bus.put(msg(f"a long job, take {turn}"))
                await until(lambda n=turn: len(server.requests) == n + 1)
                await dispatcher.bus.put(msg(STOP))
                await until(lambda n=turn: channel.sent.count("Stopped.") == n + 1)
        await budget.flush()
        await provider.aclose()
    assert len(server.requests) == 6 and not any(b.get("stream") for b in server.requests)
    assert len(kept(caplog)) == 6 and budget.used() == budget.used("cli:alice") == sum(kept(caplog))
    assert budget.used() >= sum(least_estimate(b, budget.reply_allowance) for b in server.requests)
    assert json.loads((tmp_path / LEDGER_NAME).read_text())["agent"] == budget.used()
    assert budget.reserved() == 0


async def test_turns_interrupted_by_newer_messages_are_all_counted(
        make_agent: MakeAgent, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "edge.agent.budget")
    channel = ChatWindow()
    with OpenAIServer(responder=slow(0.6, "the answer")) as server:
        provider = OpenAICompatibleProvider(server.base_url, "m")
        agent = make_agent(provider)
        budget = with_budget(agent, tmp_path, per_user=10_000_000)
        async with dispatching(agent, channel) as dispatcher:
            for n in range(8):  # a message every 0.4 s, each before the model has answered
                await dispatcher.bus.put(msg(f"message {n}"))
                await until(lambda n=n: len(server.requests) == n + 1)
                await asyncio.sleep(0.4)
        await provider.aclose()
    assert len(server.requests) == 8 and channel.sent == ["the answer"]
    assert len(kept(caplog)) == 7  # seven cancelled calls, and the one answered
    assert budget.used() == sum(kept(caplog)) + CALL_TOKENS
    assert budget.used() >= sum(least_estimate(b, budget.reply_allowance)
                                for b in server.requests[:7]) + CALL_TOKENS


async def test_streams_stopped_mid_way_are_counted(make_agent: MakeAgent, tmp_path: Path,
                                                   caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "edge.agent.budget")
    channel = ChatWindow()
    long_reply = answer("a long answer, written slowly. " * 8)
    with OpenAIServer(responder=lambda body: long_reply, chunk_delay=0.1) as server:
        provider = OpenAICompatibleProvider(server.base_url, "m")
        agent = make_agent(provider)
        budget = with_budget(agent, tmp_path, per_user=10_000_000)
        async with dispatching(agent, channel) as dispatcher:
            for turn in range(5):
                shown = len(channel.drafts)
                await dispatcher.bus.put(msg(f"write me something, take {turn}"))
                await until(lambda shown=shown: len(channel.drafts) > shown + 1)  # shown, edited
                await dispatcher.bus.put(msg(STOP))
                await until(lambda n=turn: channel.sent.count("Stopped.") == n + 1)
                assert len(kept(caplog)) == turn + 1  # counted by the time it says "Stopped."
        await provider.aclose()
    assert len(server.requests) == 5 and all(b["stream"] for b in server.requests)
    assert channel.sent.count("(stopped)") == 5  # each draft was cut short
    assert len(kept(caplog)) == 5 and budget.used() == sum(kept(caplog))
    assert budget.used() >= sum(least_estimate(b, budget.reply_allowance) for b in server.requests)


async def test_a_stream_cut_by_the_server_is_counted_and_so_is_the_call_asked_again(
        make_agent: MakeAgent, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "edge.agent.budget")
    with OpenAIServer([answer("a long answer, cut short. " * 4), answer("whole")],
                      cut_after_chunks=3) as server:
        provider = OpenAICompatibleProvider(server.base_url, "m")
        agent = make_agent(provider)
        budget = with_budget(agent, tmp_path, per_user=10_000_000)
        shown: list[str] = []

        async def draft(text: str) -> None:
            shown.append(text)

        reply = await agent.respond(msg("hello"), on_text=draft)
        await provider.aclose()
    assert reply == "whole" and shown  # the cut stream showed text, then was asked again
    assert [b.get("stream", False) for b in server.requests] == [True, False]
    assert len(kept(caplog)) == 1
    assert budget.used() == kept(caplog)[0] + CALL_TOKENS
    assert kept(caplog)[0] >= least_estimate(server.requests[0], budget.reply_allowance)


async def test_one_person_in_four_chats_at_once_stays_within_one_call_of_the_cap(
        make_agent: MakeAgent, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "edge.agent.budget")

    def model(body: dict[str, Any]) -> Reply:  # reads the led, then answers
        time.sleep(0.3)
        if body["messages"][-1]["role"] == "tool":
            return answer("the led is off")
        return read_led(body)

    with OpenAIServer(responder=model) as server:
        provider = OpenAICompatibleProvider(server.base_url, "m")
        agent = make_agent(provider)
        budget = with_budget(agent, tmp_path, per_user=1000)
        replies = await asyncio.gather(*(agent.respond(msg("tell me about the led", reply_target=f"chat-{n}"))
                                         for n in range(4)))
        await provider.aclose()
    reservations = [int(m[1]) for r in caplog.records
                    if (m := re.match(r"tokens_settled by=\S+ reserved=(\d+)", r.getMessage()))]
    answered = [r for r in replies if r.startswith("the led is off")]
    refused = [r for r in replies if r.startswith("Your model budget for today is spent")]
    assert len(answered) == 1 and len(refused) == 3
    assert len(server.requests) == 2  # the answered chat's two rounds; the others sent nothing
    assert budget.used("cli:alice") == CALL_TOKENS * len(server.requests)
    assert budget.used("cli:alice") <= 1000 + max(reservations)
    assert "held by calls still running" in refused[0]


@pytest.mark.parametrize(("limits", "says"), [
    ({"per_user": 1000}, "Your model budget for today is spent: 1200 of 1000 tokens used."),
    ({"agent": 1000}, "Today's model budget is spent: 1200 of 1000 tokens used."),
])
async def test_a_tool_loop_stops_when_the_cap_is_reached_and_says_why(
        make_agent: MakeAgent, tmp_path: Path, limits: dict[str, int], says: str) -> None:
    with OpenAIServer(responder=read_led) as server:
        provider = OpenAICompatibleProvider(server.base_url, "m")
        agent = make_agent(provider, max_tool_iterations=10)
        budget = with_budget(agent, tmp_path, **limits)
        reply = await agent.respond(msg("keep reading the led"))
        await provider.aclose()
    assert len(server.requests) == 2  # two rounds counted 1200; the third was not sent
    assert budget.used() == budget.used("cli:alice") == 1200
    tools, why = reply.split("\n\n")
    assert tools.splitlines() == ["What the tools returned:"] + ["- gpio_read: gpio:GPIO17 (led) is off"] * 2
    assert why.startswith(f"The model was not asked again. {says}")
    assert "It resets at 00:00" in why


class HugeSchema:
    """A tool whose input schema is 220 KB, as a hostile MCP server offered one."""

    name = "catalogue"
    description = "Looks things up."

    def parameters_schema(self) -> dict[str, Any]:
        return {"type": "object", "properties": {
            f"field_{n}": {"type": "string", "description": "x" * 200} for n in range(1000)}}

    async def execute(self, args: dict[str, Any], requester: Requester) -> ToolResult:
        return ToolResult(True, "nothing")


async def test_a_provider_without_usage_is_estimated_with_the_tool_schemas(
        make_agent: MakeAgent, tmp_path: Path) -> None:
    with OpenAIServer([answer("y" * 40, usage=False)]) as server:
        provider = OpenAICompatibleProvider(server.base_url, "m")
        agent = make_agent(provider)
        agent.tools.append(HugeSchema())
        budget = with_budget(agent, tmp_path, agent=10_000_000)
        assert await agent.respond(msg("hello")) == "y" * 40
        await provider.aclose()
    compact = {"ensure_ascii": False, "separators": (",", ":")}  # as httpx sends JSON
    schema_bytes = len(json.dumps(HugeSchema().parameters_schema(), **compact))
    request_bytes = len(json.dumps(server.requests[0], **compact))
    assert schema_bytes >= 220_000 and request_bytes > schema_bytes
    assert budget.used() >= schema_bytes // 4
    assert budget.used() >= request_bytes * 99 // 400  # the whole request, within 1 %
