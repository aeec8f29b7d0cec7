"""Anthropic Messages API against a loopback server speaking its wire format."""

from __future__ import annotations

import json

import pytest

from edge.core.messages import ChatMessage, ToolSpec
from edge.providers.anthropic import AnthropicProvider
from edge.providers.base import ProviderError, StreamDone, StreamInterrupted, TextDelta, ToolCallReady
from tests.providers.fakes import AnthropicFake, Call, Cut, Fail, Say

READ = ToolSpec("gpio_read", "Read a pin.", {
    "type": "object", "properties": {"pin": {"type": "string", "pattern": "^[A-Za-z0-9]+$"}},
    "required": ["pin"], "$defs": {"Unused": {"type": "string"}}})


@pytest.fixture
async def anthropic(serve):
    fake = AnthropicFake()
    server = await serve(fake)
    provider = AnthropicProvider("claude-test", "sk-ant-test", base_url=server.url)
    yield fake, server, provider
    await provider.aclose()


async def test_chat_sends_headers_system_and_tools_and_ignores_thinking(anthropic):
    fake, server, provider = anthropic
    fake.script = [Call("gpio_read", {"pin": "button"}, text="Let me look.")]
    response = await provider.chat([ChatMessage.system("Be brief."), ChatMessage.user("button?")],
                                   tools=[READ])
    assert response.text == "Let me look."  # the thinking block is not part of the reply
    assert [(c.id, c.name, json.loads(c.arguments)) for c in response.tool_calls] == [
        ("toolu_01A", "gpio_read", {"pin": "button"})]
    assert (response.usage.input_tokens, response.usage.output_tokens) == (30, 9)
    sent = server.requests[0]
    assert sent.headers["x-api-key"] == "sk-ant-test"
    assert sent.headers["anthropic-version"] == "2023-06-01"
    body = sent.json
    assert body["system"] == "Be brief." and body["max_tokens"] == 4096
    assert body["messages"] == [{"role": "user", "content": [{"type": "text", "text": "button?"}]}]
    assert body["tools"] == [{"name": "gpio_read", "description": "Read a pin.", "input_schema": {
        "type": "object", "properties": {"pin": {"type": "string"}}, "required": ["pin"]}}]
    assert fake.problems == []


async def test_tool_results_go_back_as_one_user_turn_after_the_tool_use(anthropic):
    fake, server, provider = anthropic
    fake.script = [Call("gpio_read", {"pin": "button"}), Say("The button is pressed.")]
    first = await provider.chat([ChatMessage.user("button?")], tools=[READ])
    history = [ChatMessage.user("button?"), ChatMessage.assistant("", first.tool_calls),
               ChatMessage.tool("toolu_01A", "button is pressed")]
    response = await provider.chat(history, tools=[READ])
    assert response.text == "The button is pressed." and fake.problems == []
    last = server.requests[-1].json["messages"]
    assert [m["role"] for m in last] == ["user", "assistant", "user"]
    assert last[2]["content"][0] == {"type": "tool_result", "tool_use_id": "toolu_01A",
                                     "content": "button is pressed"}


async def test_large_system_prompt_and_long_conversation_are_marked_for_caching(anthropic):
    fake, server, provider = anthropic
    big = "You are a careful agent. " * 200
    history = [ChatMessage.system(big)]
    for i in range(3):
        history += [ChatMessage.user(f"q{i}"), ChatMessage.assistant(f"a{i}")]
    history.append(ChatMessage.user("last"))
    await provider.chat(history)
    body = server.requests[0].json
    assert body["system"] == [{"type": "text", "text": big, "cache_control": {"type": "ephemeral"}}]
    assert body["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" not in body["messages"][0]["content"][-1]
    await provider.chat([ChatMessage.system("short"), ChatMessage.user("hi")])
    assert server.requests[1].json["system"] == "short"


async def test_stream_parses_the_named_events(anthropic):
    fake, server, provider = anthropic
    fake.script = [Call("gpio_read", {"pin": "button"}, text="Checking the button.")]
    events = [e async for e in provider.stream([ChatMessage.user("button?")], tools=[READ])]
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert text == "Checking the button."
    calls = [e.call for e in events if isinstance(e, ToolCallReady)]
    assert [(c.name, json.loads(c.arguments)) for c in calls] == [("gpio_read", {"pin": "button"})]
    done = events[-1]
    assert isinstance(done, StreamDone)
    assert (done.response.usage.input_tokens, done.response.usage.output_tokens) == (30, 9)
    assert done.response.model == "claude-test" and server.requests[0].json["stream"] is True


async def test_overloaded_529_is_retryable_and_cut_streams_raise(anthropic):
    fake, _, provider = anthropic
    fake.script = [Fail(529, "Overloaded"), Cut("Hello there, friend", events=8)]
    with pytest.raises(ProviderError, match="HTTP 529 from anthropic: Overloaded") as caught:
        await provider.chat([ChatMessage.user("hi")])
    assert caught.value.retryable
    with pytest.raises(StreamInterrupted) as cut:
        async for _ in provider.stream([ChatMessage.user("hi")]):
            pass
    assert cut.value.partial_text == "Hell"
