"""The daily token budget: counted from the wire, refusing model turns when spent (for the agent
or one person) while commands keep working, admins told at 80 % and 100 %, a ledger that
survives a restart and starts afresh at local midnight, today's use in status and `edge-cli models`."""

from __future__ import annotations

import asyncio
import json
import stat
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from edge.agent.budget import LEDGER_NAME, BudgetLimits, TokenBudget
from edge.agent.pipeline import Agent
from edge.cli.main import main
from edge.core.messages import ChatMessage, ToolSpec
from edge.providers.base import ChatResponse, Provider
from edge.providers.openai import OpenAICompatibleProvider
from tests.fakes.inprocess import RunningAgent
from tests.fakes.openai_server import OpenAIServer, completion
from tests.helpers import msg

NOON = datetime(2026, 11, 26, 12, 0).astimezone()
WIRE_TOKENS = 18
"""What the fake server reports per answer: 11 prompt + 7 completion tokens."""

MakeAgent = Callable[..., Agent]
StartAgent = Callable[..., Awaitable[RunningAgent]]


class Clock:
    def __init__(self, now: datetime = NOON):
        self.now = now

    def __call__(self) -> datetime:
        return self.now


class Unmetered(Provider):
    """A model whose answers carry no usage figures (as some local servers send them)."""

    name, model = "quiet", "quiet-1"

    async def chat(self, messages: Sequence[ChatMessage], tools: list[ToolSpec] | None = None,
                   *, model: str | None = None) -> ChatResponse:
        return ChatResponse("y" * 40)


def budget_at(tmp_path: Path, clock: Clock | None = None, notices: list[str] | None = None,
              **limits: int) -> TokenBudget:
    async def notify(text: str) -> None:
        assert notices is not None
        notices.append(text)

    return TokenBudget(BudgetLimits(**limits), tmp_path / LEDGER_NAME,
                       notify=notify if notices is not None else None, now=clock or Clock())


async def test_usage_is_counted_from_the_wire_and_kept_in_a_private_ledger(make_agent: MakeAgent,
                                                                      tmp_path: Path) -> None:
    with OpenAIServer([(200, completion("hi"))] * 2) as server:
        provider = OpenAICompatibleProvider(server.base_url, "m")
        agent = make_agent(provider)
        agent.budget = budget = budget_at(tmp_path, agent=1000)
        assert await agent.respond(msg("hello")) == "hi"
        shown: list[str] = []

        async def draft(text: str) -> None:
            shown.append(text)

        assert await agent.respond(msg("again"), on_text=draft) == "hi"  # streamed: usage chunk
        await provider.aclose()
    assert server.requests[1]["stream"] is True and shown
    assert budget.used() == budget.used("cli:alice") == 2 * WIRE_TOKENS
    ledger = tmp_path / LEDGER_NAME
    assert json.loads(ledger.read_text())["agent"] == 2 * WIRE_TOKENS
    assert stat.S_IMODE(ledger.stat().st_mode) == 0o600


async def test_a_provider_without_usage_figures_is_estimated(make_agent: MakeAgent,
                                                              tmp_path: Path) -> None:
    agent = make_agent(Unmetered())
    agent.budget = budget = budget_at(tmp_path, agent=10_000)
    assert await agent.respond(msg("hello")) == "y" * 40
    prompt_chars = 4 * (budget.used() - 10)  # the reply's 40 characters are 10 tokens
    assert 1000 < prompt_chars < 40_000  # the system prompt and the user turn, ~4 chars a token


async def test_a_spent_budget_answers_without_calling_the_model(make_agent: MakeAgent,
                                                              tmp_path: Path) -> None:
    with OpenAIServer([(200, completion("hi"))] * 2) as server:
        provider = OpenAICompatibleProvider(server.base_url, "m")
        agent = make_agent(provider)
        agent.budget = budget_at(tmp_path, agent=WIRE_TOKENS)
        assert await agent.respond(msg("hello")) == "hi"
        reply = await agent.respond(msg("and now?"))
        await provider.aclose()
    assert len(server.requests) == 1
    assert reply.startswith("Today's model budget is spent: 18 of 18 tokens used.")
    assert "resets at 00:00" in reply


async def test_a_per_user_budget_stops_only_that_person(make_agent: MakeAgent, tmp_path: Path) -> None:
    with OpenAIServer([(200, completion("hi"))] * 3) as server:
        provider = OpenAICompatibleProvider(server.base_url, "m")
        agent = make_agent(provider)
        agent.budget = budget_at(tmp_path, per_user=WIRE_TOKENS)
        assert await agent.respond(msg("hello", "alice")) == "hi"
        refused = await agent.respond(msg("more", "alice"))
        assert await agent.respond(msg("hello", "bob")) == "hi"
        await provider.aclose()
    assert refused.startswith("Your model budget for today is spent: 18 of 18")
    assert len(server.requests) == 2


async def test_commands_still_work_when_the_budget_is_spent(make_agent: MakeAgent, mock_factory: Any,
                                                      tmp_path: Path) -> None:
    agent = make_agent(OpenAICompatibleProvider("http://127.0.0.1:9/v1", "m"))
    agent.budget = budget = budget_at(tmp_path, agent=10)
    await budget.record("cli:alice", 50)
    assert budget.refusal("cli:alice") is not None
    assert await agent.command(msg("/status")) == "status text"
    assert "set on" in (await agent.command(msg("/gpio led on")) or "")
    assert mock_factory.pin(17).state == 1


async def test_admins_are_told_once_at_80_and_once_at_100_percent(tmp_path: Path) -> None:
    notices: list[str] = []
    budget = budget_at(tmp_path, notices=notices, agent=100)
    for tokens in (50, 30, 5):
        await budget.record("cli:alice", tokens)
    assert notices == ["The model has used 80 of today's 100 tokens (80 %)."]
    await budget.record("telegram:42", 20)
    await budget.record("telegram:42", 20)
    assert len(notices) == 2 and notices[1].startswith("The model has used 105 of today's 100 "
                                                       "tokens (105 %): model turns are refused")
    restarted = budget_at(tmp_path, notices=notices, agent=100)
    await restarted.record("cli:alice", 1)
    assert len(notices) == 2  # "once" holds across a restart


async def test_a_call_settled_past_the_cap_is_told_in_numbers_that_agree(tmp_path: Path) -> None:
    """A reservation under the cap that settles above it crosses 80 % and 100 % at once: one
    notice, the count of the cap and the share those two make (not "30 of 20 tokens (80 %)")."""
    notices: list[str] = []
    budget = budget_at(tmp_path, notices=notices, agent=20)
    call = budget.reserve("telegram:42", 10)
    await budget.settle(call, 30)
    assert notices == ["The model has used 30 of today's 20 tokens (150 %): model turns are "
                       "refused until the budget resets at 00:00; commands, rules and schedules "
                       "still work."]


async def test_the_ledger_survives_a_restart_and_resets_at_local_midnight(tmp_path: Path) -> None:
    clock = Clock()
    budget = budget_at(tmp_path, clock, agent=100, per_user=50)
    await budget.record("cli:alice", 60)
    restarted = budget_at(tmp_path, clock, agent=100, per_user=50)
    assert restarted.used() == 60 and restarted.used("cli:alice") == 60
    assert restarted.refusal("cli:alice") is not None and restarted.refusal("cli:bob") is None
    clock.now = NOON.replace(hour=23, minute=59)
    assert restarted.used() == 60
    clock.now = NOON + timedelta(hours=12)  # 00:00 the next day
    assert restarted.used() == 0 and restarted.refusal("cli:alice") is None
    clock.now = NOON + timedelta(days=1)
    assert budget_at(tmp_path, clock, agent=100).used() == 0  # yesterday's file: a fresh day
    await restarted.record("cli:bob", 5)
    assert json.loads((tmp_path / LEDGER_NAME).read_text()) == {
        "day": "2026-11-27", "agent": 5, "people": {"cli:bob": 5}, "notified": []}


async def test_status_and_models_show_todays_use(start_agent: StartAgent,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    with OpenAIServer([(200, completion("hi"))]) as server:
        running = await start_agent(f'[provider]\nbase_url = "{server.base_url}"\nmodel = "m"\n'
                                    "daily_token_budget = 1000\nper_user_daily_tokens = 500\n")
        runtime = running.runtime
        assert runtime.agent is not None
        assert await runtime.agent.respond(msg("hello")) == "hi"
        status = await runtime.status()
        assert status["provider"]["tokens"]["used"] == WIRE_TOKENS
        assert ("tokens today: 18 of 1000, at most 500 per person (resets at 00:00)"
                in await runtime.status_text())
        config = str(runtime.loaded.source)
        code = await asyncio.to_thread(main, ["models", "--json", "--config", config])
        out = json.loads(capsys.readouterr().out)
        await running.stop()
    assert code == 0 and out["via"] == "daemon"
    assert out["data"]["tokens"]["used"] == WIRE_TOKENS
    assert out["data"]["tokens"]["budget"] == 1000
    code = await asyncio.to_thread(main, ["models", "--json", "--config", config])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["via"] == "config" and out["data"]["tokens"]["used"] == WIRE_TOKENS
