"""OpenAI-compatible chat completions over httpx, native tools, SSE streaming.

One implementation serves OpenAI, Ollama (``http://127.0.0.1:11434/v1``), OpenRouter, Groq,
DeepSeek, Mistral, llama.cpp server and any endpoint that speaks ``POST {base_url}/chat/completions``,
told apart by base URL and auth style:
``bearer`` (``Authorization: Bearer KEY``), ``x-api-key``, or ``header`` (a custom header name).
A base URL without a path gets ``/v1``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx

from edge.config.presets import AuthStyle
from edge.core.httpclient import normalise_base_url
from edge.core.messages import ChatMessage, ToolCall, ToolSpec
from edge.core.sse import iter_sse
from edge.providers.base import (
    ChatResponse,
    ProviderError,
    StreamDone,
    StreamEvent,
    StreamInterrupted,
    TextDelta,
    ToolCallReady,
    Usage,
)
from edge.providers.constrained import call_or_reply, read_constrained
from edge.providers.endpoint import HttpEndpoint, ToolMode, WireProvider, decode_chunk, keep_partial
from edge.providers.keys import KeyRing
from edge.providers.prompt_guided import ToolSupportMemory
from edge.providers.schema import SchemaCleanr, Strategy


def auth_headers(style: AuthStyle, key: str | None, header_name: str | None = None) -> dict[str, str]:
    if not key or style == "none":
        return {}
    if style == "bearer":
        return {"Authorization": f"Bearer {key}"}
    if style == "x-api-key":
        return {"x-api-key": key}
    if not header_name:
        raise ProviderError("auth_style 'header' needs auth_header (the header's name)")
    return {header_name: key}


def to_wire(message: ChatMessage) -> dict[str, Any]:
    wire: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_calls:
        wire["content"] = message.content or None
        wire["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in message.tool_calls
        ]
    if message.tool_call_id:
        wire["tool_call_id"] = message.tool_call_id
    return wire


def tool_to_wire(spec: ToolSpec, strategy: Strategy = "openai") -> dict[str, Any]:
    return {"type": "function",
            "function": {"name": spec.name, "description": spec.description,
                         "parameters": SchemaCleanr.clean(spec.parameters, strategy)}}


def _arguments_text(arguments: object) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments or {})


def parse_response(body: dict[str, Any], model: str = "") -> ChatResponse:
    try:
        message = body["choices"][0]["message"]
    except (KeyError, IndexError, TypeError):
        raise ProviderError("provider returned a response without choices[0].message") from None
    calls = []
    for i, call in enumerate(message.get("tool_calls") or []):
        function = call.get("function") or {}
        calls.append(ToolCall(call.get("id") or f"call_{i}", function.get("name", ""),
                              _arguments_text(function.get("arguments"))))
    usage = body.get("usage") or {}
    return ChatResponse(message.get("content") or "", calls,
                        Usage(usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0)),
                        body.get("model") or model)


class OpenAICompatibleProvider(WireProvider):
    def __init__(self, base_url: str, model: str, api_key: str | None = None, *,
                 keys: KeyRing | None = None, auth_style: AuthStyle = "bearer",
                 auth_header: str | None = None, temperature: float = 0.3,
                 max_tokens: int | None = None, timeout: float = 120.0, name: str = "openai",
                 tool_mode: ToolMode = "auto", tool_memory: ToolSupportMemory | None = None,
                 schema_strategy: Strategy = "openai", constrain_calls: bool = False,
                 transport: httpx.AsyncBaseTransport | None = None):
        super().__init__(name, model, tool_mode=tool_mode, tool_memory=tool_memory)
        self.base_url = normalise_base_url(base_url)
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.auth_style, self.auth_header = auth_style, auth_header
        self.schema_strategy = schema_strategy
        self.constrain_calls = constrain_calls
        """Ask llama.cpp's grammar for a valid call or a reply (edge/providers/constrained.py)."""
        keys = keys or KeyRing([api_key] if api_key else [])
        self.endpoint = HttpEndpoint(name, self.base_url, keys, timeout=timeout,
                                     transport=transport)

    def _payload(self, messages: list[ChatMessage], tools: list[ToolSpec] | None, model: str,
                 stream: bool) -> dict[str, Any]:
        payload: dict[str, Any] = {"model": model, "messages": [to_wire(m) for m in messages],
                                   "temperature": self.temperature}
        if self.max_tokens:
            payload["max_tokens"] = self.max_tokens
        if tools:
            payload["tools"] = [tool_to_wire(t, self.schema_strategy) for t in tools]
            if self.constrain_calls:
                payload["response_format"] = call_or_reply(payload["tools"])
        if stream:
            payload["stream"] = True
            payload["stream_options"] = {"include_usage": True}
        return payload

    def _headers(self) -> dict[str, str]:
        return auth_headers(self.auth_style, self.endpoint.keys.current, self.auth_header)

    async def send(self, messages: list[ChatMessage], tools: list[ToolSpec] | None,
                   model: str) -> ChatResponse:
        body = await self.endpoint.post_json("/chat/completions",
                                             self._payload(messages, tools, model, False),
                                             headers=self._headers())
        response = parse_response(body, model)
        if self.constrain_calls and tools and not response.tool_calls:
            text, calls = read_constrained(response.text, {t.name for t in tools})
            response = ChatResponse(text, calls, response.usage, response.model)
        return response

    async def send_stream(self, messages: list[ChatMessage], tools: list[ToolSpec] | None,
                          model: str) -> AsyncIterator[StreamEvent]:
        if self.constrain_calls and tools:  # the JSON is read whole, so it is not streamed
            response = await self.send(messages, tools, model)
            if response.text:
                yield TextDelta(response.text)
            for call in response.tool_calls:
                yield ToolCallReady(call)
            yield StreamDone(response)
            return
        payload = self._payload(messages, tools, model, True)
        text: list[str] = []
        partial: dict[int, dict[str, str]] = {}
        usage, answered_by, finished, done = Usage(), model, False, False
        async with self.endpoint.stream_lines("/chat/completions", payload,
                                              headers=self._headers()) as lines:
            async for event in keep_partial(iter_sse(lines), text):
                if event.data.strip() == "[DONE]":
                    done = True
                    break
                chunk = decode_chunk(event.data, self.name)
                if chunk.get("error"):
                    raise self.endpoint.http_error(502, event.data.encode(), httpx.Headers())
                answered_by = chunk.get("model") or answered_by
                if chunk.get("usage"):
                    usage = Usage(chunk["usage"].get("prompt_tokens", 0),
                                  chunk["usage"].get("completion_tokens", 0))
                for choice in chunk.get("choices") or []:
                    delta = choice.get("delta") or {}
                    if delta.get("content"):
                        text.append(delta["content"])
                        yield TextDelta(delta["content"])
                    for piece in delta.get("tool_calls") or []:
                        slot = partial.setdefault(piece.get("index", len(partial)),
                                                  {"id": "", "name": "", "arguments": ""})
                        function = piece.get("function") or {}
                        slot["id"] = piece.get("id") or slot["id"]
                        slot["name"] += function.get("name") or ""
                        slot["arguments"] += _arguments_text(function.get("arguments") or "")
                    finished = finished or bool(choice.get("finish_reason"))
        if not (done or finished):
            raise StreamInterrupted(f"{self.name} stream ended before it finished", "".join(text))
        calls = [ToolCall(slot["id"] or f"call_{index}", slot["name"], slot["arguments"] or "{}")
                 for index, slot in sorted(partial.items())]
        for call in calls:
            yield ToolCallReady(call)
        yield StreamDone(ChatResponse("".join(text), calls, usage, answered_by))
