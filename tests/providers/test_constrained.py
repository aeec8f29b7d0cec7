"""The llamacpp preset asks for a valid call or a reply (a JSON schema llama.cpp turns into a
grammar) and reads the answer back into a call or words, streaming or not; other endpoints are
sent no schema. The real server obeying it is tests/local_model."""

from __future__ import annotations

import json

from edge.config.model import ProviderConfig
from edge.core.messages import ChatMessage
from edge.providers.base import StreamDone, TextDelta
from edge.providers.factory import create_endpoint
from edge.providers.openai import OpenAICompatibleProvider
from tests.providers.fakes import OpenAIFake, Say
from tests.providers.test_openai_wire import CONVERSATION, WRITE


async def test_the_llamacpp_preset_sends_the_schema_and_reads_a_call_from_the_reply(serve):
    fake = OpenAIFake()
    server = await serve(fake)
    provider = create_endpoint(ProviderConfig(preset="llamacpp", base_url=server.url,
                                              model="gemma", api_key="sk-test"), env={})
    fake.script = [Say('{"name": "gpio_write", "arguments": {"pin": "led", "value": "on"}}'),
                   Say('{"reply": "The led is on."}')]
    first = await provider.chat(CONVERSATION, tools=[WRITE])
    assert first.text == "" and [(c.name, json.loads(c.arguments)) for c in first.tool_calls] == [
        ("gpio_write", {"pin": "led", "value": "on"})]
    options = server.requests[0].json["response_format"]["json_schema"]["schema"]["anyOf"]
    assert options[0]["properties"]["name"] == {"const": "gpio_write"}
    assert options[0]["properties"]["arguments"]["properties"]["value"] == {"enum": ["on", "off"]}
    assert options[1]["required"] == ["reply"]
    events = [e async for e in provider.stream(CONVERSATION, tools=[WRITE])]
    assert [type(e) for e in events] == [TextDelta, StreamDone]
    assert events[0].text == "The led is on."  # type: ignore[union-attr]
    assert "stream" not in server.requests[1].json
    await provider.aclose()


async def test_without_tools_or_for_other_endpoints_no_schema_is_sent(serve):
    fake = OpenAIFake()
    server = await serve(fake)
    constrained = create_endpoint(ProviderConfig(preset="llamacpp", base_url=server.url,
                                                 model="gemma", api_key="sk-test"), env={})
    plain = OpenAICompatibleProvider(server.url, "qwen2.5:1.5b", "sk-test")
    fake.script = [Say('{"reply": "hi"}'), Say('{"name": "gpio_write", "arguments": {}}')]
    assert (await constrained.chat([ChatMessage.user("hi")])).text == '{"reply": "hi"}'
    untouched = await plain.chat(CONVERSATION, tools=[WRITE])
    assert "response_format" not in server.requests[0].json
    assert "response_format" not in server.requests[1].json
    assert untouched.tool_calls == []  # read as a call later, by the agent, if at all
    await constrained.aclose()
    await plain.aclose()
