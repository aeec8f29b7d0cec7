"""The compact profile for small local models: on by itself for a local endpoint; a short fixed
system prompt and the tools a turn can need first, what changes after them; pin and sensor
names as enums; ``seconds`` on a switch; under 1,000 prompt tokens for the first call."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from edge.agent.context import evaluate_guard
from edge.agent.intents import is_state_question
from edge.config.model import EndpointConfig
from edge.core.messages import ChatMessage, ToolCall, ToolSpec
from edge.hardware import Hardware
from edge.providers.base import ChatResponse, Provider
from tests.agent.test_intents_evaluation import evaluated_agent
from tests.helpers import msg


class LocalModel(Provider):
    """A local endpoint's model that answers from a script and keeps what it was sent."""

    name = "local"
    model = "qwen2.5-0.5b"
    compact_profile = True  # type: ignore[assignment]

    def __init__(self, replies: list[ChatResponse | str]):
        self.replies = list(replies)
        self.sent: list[tuple[list[ChatMessage], list[ToolSpec]]] = []

    async def chat(self, messages: Any, tools: list[ToolSpec] | None = None, *,
                   model: str | None = None) -> ChatResponse:
        self.sent.append((list(messages), list(tools or [])))
        reply = self.replies.pop(0)
        return reply if isinstance(reply, ChatResponse) else ChatResponse(reply)


def prompt_tokens(messages: list[ChatMessage], specs: list[ToolSpec]) -> int:
    """About what the endpoint counts: 4 characters a token, schemas included."""
    text = "".join(m.content for m in messages) + json.dumps(
        [{"name": s.name, "description": s.description, "parameters": s.parameters}
         for s in specs])
    return len(text) // 4 + 10 * len(messages)


@pytest.mark.parametrize(("endpoint", "compact"), [
    ({"preset": "ollama", "model": "qwen2.5:0.5b"}, True),
    ({"preset": "llamacpp", "model": "q"}, True),
    ({"base_url": "http://192.168.1.20:8080/v1", "model": "q"}, True),
    ({"base_url": "http://127.0.0.1:8080/v1", "model": "q", "compact_profile": False}, False),
    ({"preset": "openai", "model": "gpt-4o-mini"}, False),
    ({"preset": "openrouter", "model": "x", "compact_profile": True}, True),
])
def test_on_by_itself_for_a_local_endpoint_and_settable(endpoint: dict[str, Any],
                                                         compact: bool) -> None:
    assert EndpointConfig(**endpoint).compact is compact


def test_the_minimum_window_fits_the_compact_profile() -> None:
    assert evaluate_guard(4_096, compact=True).should_block is False
    assert evaluate_guard(4_096).should_block is True


async def test_the_first_call_is_short_with_a_stable_prefix_and_enums(
        eval_hardware: Hardware, tmp_path: Path) -> None:
    model = LocalModel(["Nothing to report.", "Still nothing."])
    agent = evaluated_agent(eval_hardware, model, tmp_path)
    agent.settings.local_intents = False
    await agent.respond(msg("tell me about the pump"))
    await agent.respond(msg("anything new with the fan", sender="bob"))
    (first, specs), (second, specs_again) = model.sent
    fixed, changing = first[0], first[1]
    assert "## Tools" not in fixed.content and "gpio_write" not in fixed.content
    assert "Now:" in changing.content and "Now:" not in fixed.content
    assert second[0] == fixed and specs_again[:4] == specs  # the prefix a prompt cache keeps
    assert [s.name for s in specs_again] == ["board_status", "gpio_read", "sensor_read",
                                             "history", "gpio_write"]
    write = specs_again[4].parameters["properties"]
    assert write["pin"]["enum"] == ["led", "pump", "fan", "grow-light"]
    assert write["seconds"]["type"] == "integer"
    assert specs[2].parameters["properties"]["name"]["enum"] == ["greenhouse"]
    assert prompt_tokens(second, specs_again) <= 1_000


async def test_a_state_question_is_offered_no_switch(eval_hardware: Hardware,
                                                     tmp_path: Path) -> None:
    model = LocalModel([ChatResponse("", [ToolCall("1", "gpio_write", json.dumps(
        {"pin": "pump", "value": "on"}))]), "The pump is on."])
    agent = evaluated_agent(eval_hardware, model, tmp_path)
    agent.settings.local_intents = False
    question = "is the pump on? tell me honestly"
    assert is_state_question(question)
    reply = await agent.respond(msg(question))
    assert "gpio_write" not in [s.name for s in model.sent[0][1]]
    assert "Receipt" not in reply and "unknown tool 'gpio_write'" in model.sent[1][0][-1].content


async def test_a_switch_for_some_seconds_goes_off_again(
        eval_hardware: Hardware, mock_factory: Any, tmp_path: Path) -> None:
    model = LocalModel([ChatResponse("", [ToolCall("1", "gpio_write", json.dumps(
        {"pin": "pump", "value": "on", "seconds": 1}))]), "The pump runs for a second."])
    agent = evaluated_agent(eval_hardware, model, tmp_path)
    agent.settings.local_intents = False
    reply = await agent.respond(msg("water for a second"))
    assert "Receipt: pump: on (read back on)" in reply and mock_factory.pin(22).state == 1
    assert "goes off again in 1 s" in model.sent[1][0][-1].content
    [timer] = agent.intents[1]._timers.values()
    await asyncio.wait_for(timer, 5)
    assert mock_factory.pin(22).state == 0
