"""OpenAI-compatible chat completions against a loopback server speaking the real wire format."""

from __future__ import annotations

import json

import pytest

from edge.core.messages import ChatMessage, ToolSpec
from edge.providers.base import ProviderError, StreamDone, StreamInterrupted, TextDelta, ToolCallReady
from edge.providers.openai import OpenAICompatibleProvider
from tests.providers.fakes import Call, Cut, Fail, OpenAIFake, Say

WRITE = ToolSpec("gpio_write", "Switch an output pin.",
                 {"type": "object", "properties": {"pin": {"type": "string", "minLength": 1},
                                                   "value": {"enum": ["on", "off"]}},
                  "required": ["pin", "value"]})
CONVERSATION = [ChatMessage.system("You drive a Pi."), ChatMessage.user("switch the led on")]


@pytest.fixture
async def openai(serve):
    fake = OpenAIFake()
    server = await serve(fake)
    provider = OpenAICompatibleProvider(server.url, "qwen2.5:1.5b", "sk-test", temperature=0.2)
    yield fake, server, provider
    await provider.aclose()


async def test_chat_sends_the_model_messages_and_bearer_key_and_parses_the_reply(openai):
    fake, server, provider = openai
    fake.script = [Say("Hello from the model")]
    response = await provider.chat(CONVERSATION)
    assert response.text == "Hello from the model"
    assert (response.usage.input_tokens, response.usage.output_tokens) == (21, 7)
    sent = server.requests[0]
    assert sent.path == "/v1/chat/completions"
    assert sent.headers["authorization"] == "Bearer sk-test"
    assert sent.json == {"model": "qwen2.5:1.5b", "temperature": 0.2, "messages": [
        {"role": "system", "content": "You drive a Pi."},
        {"role": "user", "content": "switch the led on"}]}
    assert fake.problems == []


async def test_tool_call_round_trip_keeps_ids_and_reuses_the_connection(openai):
    fake, server, provider = openai
    fake.script = [Call("gpio_write", {"pin": "led", "value": "on"}), Say("The led is on.")]
    first = await provider.chat(CONVERSATION, tools=[WRITE])
    call = first.tool_calls[0]
    assert (call.id, call.name, json.loads(call.arguments)) == (
        "call_abc123", "gpio_write", {"pin": "led", "value": "on"})
    tool = server.requests[0].json["tools"][0]
    assert tool["function"]["name"] == "gpio_write" and tool["type"] == "function"
    history = [*CONVERSATION, ChatMessage.assistant("", first.tool_calls),
               ChatMessage.tool(call.id, "led is on")]
    second = await provider.chat(history, tools=[WRITE])
    assert second.text == "The led is on."
    assert server.requests[1].json["messages"][2]["tool_calls"][0]["id"] == "call_abc123"
    assert server.requests[1].json["messages"][3] == {"role": "tool", "content": "led is on",
                                                      "tool_call_id": "call_abc123"}
    assert fake.problems == [] and server.connections == 1


async def test_stream_yields_text_deltas_then_the_assembled_tool_call(openai):
    fake, server, provider = openai
    fake.script = [Call("gpio_write", {"pin": "led", "value": "on"}, text="Switching it on.")]
    events = [e async for e in provider.stream(CONVERSATION, tools=[WRITE])]
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert len(deltas) > 1 and "".join(deltas) == "Switching it on."
    calls = [e.call for e in events if isinstance(e, ToolCallReady)]
    assert [(c.id, c.name, json.loads(c.arguments)) for c in calls] == [
        ("call_abc123", "gpio_write", {"pin": "led", "value": "on"})]
    done = events[-1]
    assert isinstance(done, StreamDone) and done.response.usage.output_tokens == 7
    sent = server.requests[0].json
    assert sent["stream"] is True and sent["stream_options"] == {"include_usage": True}


async def test_a_connection_cut_mid_stream_raises_with_the_partial_text(openai):
    fake, _, provider = openai
    fake.script = [Cut("one two three four five", events=3)]
    seen = []
    with pytest.raises(StreamInterrupted) as caught:
        async for event in provider.stream(CONVERSATION):
            seen.append(event)
    assert caught.value.partial_text == "one two " and caught.value.retryable
    assert all(isinstance(e, TextDelta) for e in seen)


async def test_429_carries_retry_after_and_never_the_key(openai):
    fake, _, provider = openai
    fake.script = [Fail(429, "Rate limit reached for sk-test", retry_after="7")]
    with pytest.raises(ProviderError) as caught:
        await provider.chat(CONVERSATION)
    error = caught.value
    assert (error.status, error.retry_after, error.retryable) == (429, 7.0, True)
    assert "sk-test" not in str(error) and "Rate limit reached" in str(error)


async def test_400_is_not_retryable_and_names_the_problem(openai):
    fake, _, provider = openai
    fake.script = [Fail(400, "context length exceeded")]
    expected = "provider returned HTTP 400 from openai: context length exceeded"
    with pytest.raises(ProviderError, match=expected) as caught:
        await provider.chat(CONVERSATION)
    assert not caught.value.retryable


async def test_endpoint_that_rejects_tools_falls_back_to_the_tool_call_protocol_for_good(serve):
    fake = OpenAIFake(rejects_tools=True, script=[
        Say('Sure. <tool_call>{"name": "gpio_write", "arguments": {"pin": "led", "value": "on"}}'
            "</tool_call>"), Say("Done, the led is on.")])
    server = await serve(fake)
    provider = OpenAICompatibleProvider(server.url, "gemma:2b", "sk-test")
    try:
        first = await provider.chat(CONVERSATION, tools=[WRITE])
        assert first.text == "Sure."
        assert [(c.name, json.loads(c.arguments)) for c in first.tool_calls] == [
            ("gpio_write", {"pin": "led", "value": "on"})]
        guided = server.requests[1].json
        assert "tools" not in guided and "<tool_call>" in guided["messages"][0]["content"]
        assert guided["messages"][0]["content"].startswith("You drive a Pi.")
        history = [*CONVERSATION, ChatMessage.assistant(first.text, first.tool_calls),
                   ChatMessage.tool(first.tool_calls[0].id, "led is on")]
        second = await provider.chat(history, tools=[WRITE])
        assert second.text == "Done, the led is on." and not second.tool_calls
        third_request = server.requests[2].json
        assert "tools" not in third_request  # remembered: no second rejected attempt
        assert third_request["messages"][-1]["role"] == "user"
        assert '<tool_result name="gpio_write">' in third_request["messages"][-1]["content"]
        assert len(server.requests) == 3
    finally:
        await provider.aclose()


async def test_prompt_guided_stream_hides_the_tool_call_block(serve):
    fake = OpenAIFake(rejects_tools=True, script=[
        Say('On it. <tool_call>{"name": "gpio_write", "arguments": {"pin": "led", "value": "on"}}'
            "</tool_call>")])
    server = await serve(fake)
    provider = OpenAICompatibleProvider(server.url, "gemma:2b", "sk-test")
    try:
        events = [e async for e in provider.stream(CONVERSATION, tools=[WRITE])]
    finally:
        await provider.aclose()
    shown = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert shown.strip() == "On it." and "tool_call" not in shown
    assert [e.call.name for e in events if isinstance(e, ToolCallReady)] == ["gpio_write"]


@pytest.mark.parametrize("style, header, expected", [
    ("x-api-key", "x-api-key", "sk-test"), ("header", "api-key", "sk-test")])
async def test_auth_styles_put_the_key_in_the_right_header(serve, style, header, expected):
    fake = OpenAIFake(auth_header=header)
    server = await serve(fake)
    provider = OpenAICompatibleProvider(server.url, "m", "sk-test", auth_style=style,
                                        auth_header="api-key")
    try:
        assert (await provider.chat(CONVERSATION)).text == "ok"
    finally:
        await provider.aclose()
    assert server.requests[0].headers[header] == expected
    assert "authorization" not in server.requests[0].headers


async def test_unreachable_endpoint_says_what_to_check():
    provider = OpenAICompatibleProvider("http://127.0.0.1:9", "m", "sk-test", timeout=5)
    try:
        with pytest.raises(ProviderError, match="cannot reach provider openai at .*base_url") as caught:
            await provider.chat(CONVERSATION)
    finally:
        await provider.aclose()
    assert caught.value.retryable
