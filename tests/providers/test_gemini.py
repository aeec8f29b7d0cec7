"""Gemini generateContent against a loopback server speaking its wire format."""

from __future__ import annotations

import json
import logging
from typing import Literal

import pytest
from pydantic import BaseModel, Field

from edge.core.messages import ChatMessage, ToolCall
from edge.core.requester import Requester
from edge.providers.base import ProviderError, StreamDone, TextDelta, ToolCallReady
from edge.providers.gemini import GeminiProvider
from edge.tools.base import ModelTool, ToolArgs, ToolResult, spec_of
from tests.providers.fakes import Call, Cut, Fail, GeminiFake, Say


class Level(BaseModel):
    value: Literal["on", "off"]


class WriteParams(ToolArgs):
    """A schema as pydantic writes it: a nested object by ``$ref`` to ``$defs``, titles, a
    pattern, an optional number as ``anyOf`` with null; Gemini takes none of those as is."""

    pin: str = Field(min_length=1, pattern=r"^\w+$")
    level: Level
    duration: float | None = Field(None, ge=0, description="seconds")


class WriteTool(ModelTool[WriteParams]):
    name = "gpio_write"
    description = "Switch an output pin."
    Params = WriteParams

    async def run(self, params: WriteParams, requester: Requester) -> ToolResult:
        raise AssertionError("only the tool's schema is used here")


SPEC = spec_of(WriteTool())


@pytest.fixture
async def gemini(serve):
    fake = GeminiFake()
    server = await serve(fake)
    provider = GeminiProvider("gemini-test", "AIza-test", base_url=server.url)
    yield fake, server, provider
    await provider.aclose()


async def test_key_goes_in_the_query_and_generated_schemas_pass_the_strict_check(gemini):
    fake, server, provider = gemini
    assert "$defs" in SPEC.parameters and "additionalProperties" in SPEC.parameters
    fake.script = [Call("gpio_write", {"pin": "led", "level": {"value": "on"}})]
    response = await provider.chat([ChatMessage.system("Be brief."), ChatMessage.user("led on")],
                                   tools=[SPEC])
    assert fake.problems == []
    sent = server.requests[0]
    assert sent.path == "/v1beta/models/gemini-test:generateContent"
    assert sent.query == {"key": "AIza-test"} and "authorization" not in sent.headers
    body = sent.json
    assert body["systemInstruction"] == {"parts": [{"text": "Be brief."}]}
    assert body["contents"] == [{"role": "user", "parts": [{"text": "led on"}]}]
    parameters = body["tools"][0]["functionDeclarations"][0]["parameters"]
    assert parameters["properties"]["level"]["properties"]["value"] == {
        "type": "string", "enum": ["on", "off"]}
    assert parameters["properties"]["duration"] == {"type": "number", "nullable": True,
                                                    "minimum": 0, "description": "seconds"}
    assert response.text == ""  # the thought part is not reply text
    call = response.tool_calls[0]
    assert (call.name, json.loads(call.arguments)) == ("gpio_write",
                                                       {"pin": "led", "level": {"value": "on"}})


async def test_function_response_names_the_function_it_answers(gemini):
    fake, server, provider = gemini
    fake.script = [Call("gpio_write", {"pin": "led", "level": {"value": "on"}}), Say("It is on.")]
    first = await provider.chat([ChatMessage.user("led on")], tools=[SPEC])
    history = [ChatMessage.user("led on"), ChatMessage.assistant("", first.tool_calls),
               ChatMessage.tool(first.tool_calls[0].id, "led is on")]
    second = await provider.chat(history, tools=[SPEC])
    assert second.text == "It is on." and fake.problems == []
    contents = server.requests[1].json["contents"]
    assert [c["role"] for c in contents] == ["user", "model", "user"]
    assert contents[1]["parts"][-1]["thoughtSignature"] == first.tool_calls[0].signature == "sig-1"
    assert contents[2]["parts"] == [{"functionResponse": {"name": "gpio_write",
                                                          "response": {"result": "led is on"}}}]
    assert second.usage.input_tokens == 14


async def test_a_function_call_that_lost_its_signature_is_refused_as_gemini_3_does(gemini):
    fake, _, provider = gemini
    fake.script = [Call("gpio_write", {"pin": "led", "level": {"value": "on"}})]
    first = await provider.chat([ChatMessage.user("led on")], tools=[SPEC])
    unsigned = [ToolCall(c.id, c.name, c.arguments) for c in first.tool_calls]
    history = [ChatMessage.user("led on"), ChatMessage.assistant("", unsigned),
               ChatMessage.tool(unsigned[0].id, "led is on")]
    with pytest.raises(ProviderError, match="HTTP 400.*thought_signature"):
        await provider.chat(history, tools=[SPEC])


async def test_stream_uses_alt_sse_and_skips_thoughts(gemini):
    fake, server, provider = gemini
    fake.script = [Call("gpio_write", {"pin": "led", "level": {"value": "off"}}, text="Turning off")]
    events = [e async for e in provider.stream([ChatMessage.user("led off")], tools=[SPEC])]
    assert server.requests[0].path.endswith(":streamGenerateContent")
    assert server.requests[0].query == {"alt": "sse", "key": "AIza-test"}
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Turning off"
    assert [(e.call.name, e.call.signature) for e in events
            if isinstance(e, ToolCallReady)] == [("gpio_write", "sig-1")]
    assert isinstance(events[-1], StreamDone) and events[-1].response.usage.output_tokens == 6


async def test_errors_and_logs_never_show_the_key(gemini, caplog):
    fake, _, provider = gemini
    fake.script = [Fail(429, "Resource has been exhausted", retry_after="3"),
                   Cut("never finished", events=2)]
    caplog.set_level(logging.INFO, logger="httpx")
    with pytest.raises(ProviderError) as caught:
        await provider.chat([ChatMessage.user("hi")])
    assert (caught.value.status, caught.value.retry_after) == (429, 3.0)
    with pytest.raises(ProviderError, match="cut off|without a finishReason"):
        async for _ in provider.stream([ChatMessage.user("hi")]):
            pass
    assert "AIza-test" not in str(caught.value)
    assert caplog.records and all("AIza-test" not in r.getMessage() for r in caplog.records)
    offline = GeminiProvider("gemini-test", "AIza-test", base_url="http://127.0.0.1:9", timeout=5)
    try:
        with pytest.raises(ProviderError) as unreachable:
            await offline.chat([ChatMessage.user("hi")])
    finally:
        await offline.aclose()
    assert "AIza-test" not in str(unreachable.value)
