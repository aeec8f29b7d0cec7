"""The OpenAI-compatible provider against a loopback server speaking the chat-completions format."""

from __future__ import annotations

import pytest

from edge.core.httpclient import normalise_base_url
from edge.core.messages import ChatMessage, ToolCall, ToolSpec
from edge.providers.base import ProviderError
from edge.providers.openai import OpenAICompatibleProvider
from tests.fakes.openai_server import OpenAIServer, completion, error_body

SPEC = ToolSpec("gpio_read", "Read a pin", {"type": "object", "properties": {"pin": {"type": "string"}}})


async def test_sends_model_messages_tools_and_key():
    with OpenAIServer([(200, completion("hello"))], api_key="sk-test") as server:
        provider = OpenAICompatibleProvider(server.base_url, "test-model", "sk-test")
        reply = await provider.chat([ChatMessage.system("sys"), ChatMessage.user("hi")], [SPEC])
        await provider.aclose()
    assert reply.text == "hello" and reply.usage.input_tokens == 11
    sent = server.requests[0]
    assert sent["model"] == "test-model"
    assert sent["messages"] == [{"role": "system", "content": "sys"}, {"role": "user", "content": "hi"}]
    assert sent["tools"][0] == {"type": "function", "function": {
        "name": "gpio_read", "description": "Read a pin", "parameters": SPEC.parameters}}


async def test_parses_tool_calls_and_sends_results_back():
    replies = [(200, completion(None, [{"id": "c1", "name": "gpio_read", "arguments": {"pin": "led"}}])),
               (200, completion("done"))]
    with OpenAIServer(replies) as server:
        provider = OpenAICompatibleProvider(server.base_url, "m")
        first = await provider.chat([ChatMessage.user("read led")], [SPEC])
        assert first.tool_calls == [ToolCall("c1", "gpio_read", '{"pin": "led"}')]
        history = [ChatMessage.user("read led"), ChatMessage.assistant("", first.tool_calls),
                   ChatMessage.tool("c1", "led is on")]
        second = await provider.chat(history, [SPEC])
        await provider.aclose()
    assert second.text == "done"
    assistant, tool = server.requests[1]["messages"][1:]
    assert assistant["content"] is None and assistant["tool_calls"][0]["id"] == "c1"
    assert tool == {"role": "tool", "content": "led is on", "tool_call_id": "c1"}
    assert "Authorization" not in server.headers[0]


async def test_http_errors_are_sanitised():
    with OpenAIServer([error_body(401, "Incorrect API key provided")], api_key="right") as server:
        provider = OpenAICompatibleProvider(server.base_url, "m", "sk-wrong-secret")
        with pytest.raises(ProviderError) as err:
            await provider.chat([ChatMessage.user("hi")])
        await provider.aclose()
    assert "HTTP 401" in str(err.value) and "sk-wrong-secret" not in str(err.value)


async def test_unreachable_endpoint_says_so():
    provider = OpenAICompatibleProvider("http://127.0.0.1:9/v1", "m", timeout=2)
    with pytest.raises(ProviderError, match="cannot reach provider"):
        await provider.chat([ChatMessage.user("hi")])
    await provider.aclose()


@pytest.mark.parametrize("given,expected", [
    ("http://127.0.0.1:11434", "http://127.0.0.1:11434/v1"),
    ("http://127.0.0.1:11434/v1/", "http://127.0.0.1:11434/v1"),
    ("https://openrouter.ai/api/v1", "https://openrouter.ai/api/v1"),
])
def test_base_url_normalisation(given, expected):
    assert normalise_base_url(given) == expected
