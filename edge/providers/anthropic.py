"""Anthropic Messages API (``POST /v1/messages``) over httpx: native tools, SSE streaming,
prompt caching, thinking blocks left out of the reply text.

A system prompt over 3072 bytes, or a conversation of more than
4 messages, gets ``cache_control: {"type": "ephemeral"}`` so repeated turns cost less.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx

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
from edge.providers.endpoint import HttpEndpoint, ToolMode, WireProvider, decode_chunk, keep_partial
from edge.providers.keys import KeyRing
from edge.providers.prompt_guided import ToolSupportMemory
from edge.providers.schema import SchemaCleanr

API_VERSION = "2023-06-01"
DEFAULT_BASE_URL = "https://api.anthropic.com"
DEFAULT_MAX_TOKENS = 4096
CACHE_SYSTEM_BYTES = 3072
CACHE_MESSAGE_COUNT = 4
EPHEMERAL = {"type": "ephemeral"}


def to_wire(messages: list[ChatMessage]) -> tuple[str, list[dict[str, Any]]]:
    """The system text and the alternating user/assistant turns, with tool blocks."""
    system: list[str] = []
    turns: list[dict[str, Any]] = []
    blocks: list[dict[str, Any]]
    for message in messages:
        if message.role == "system":
            system.append(message.content)
            continue
        if message.role == "tool":
            role, blocks = "user", [{"type": "tool_result", "tool_use_id": message.tool_call_id,
                                     "content": message.content}]
        else:
            role = message.role
            blocks = [{"type": "text", "text": message.content}] if message.content else []
            blocks += [{"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments_object()}
                       for c in message.tool_calls]
        if not blocks:
            continue
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)  # the API wants strict alternation
        else:
            turns.append({"role": role, "content": blocks})
    return "\n\n".join(system), turns


def apply_caching(payload: dict[str, Any]) -> None:
    system = payload.get("system")
    if isinstance(system, str) and len(system.encode()) > CACHE_SYSTEM_BYTES:
        payload["system"] = [{"type": "text", "text": system, "cache_control": EPHEMERAL}]
    messages = payload["messages"]
    if len(messages) > CACHE_MESSAGE_COUNT and messages[-1]["content"]:
        messages[-1]["content"][-1]["cache_control"] = EPHEMERAL


def tool_to_wire(spec: ToolSpec) -> dict[str, Any]:
    return {"name": spec.name, "description": spec.description,
            "input_schema": SchemaCleanr.clean(spec.parameters, "anthropic")}


def parse_response(body: dict[str, Any], model: str = "") -> ChatResponse:
    content = body.get("content")
    if not isinstance(content, list):
        raise ProviderError("anthropic returned a message without content")
    text: list[str] = []
    calls: list[ToolCall] = []
    for block in content:
        if block.get("type") == "text":
            text.append(block.get("text", ""))
        elif block.get("type") == "tool_use":
            calls.append(ToolCall(block.get("id", f"toolu_{len(calls)}"), block.get("name", ""),
                                  json.dumps(block.get("input") or {})))
        # thinking and redacted_thinking blocks are the model's scratchpad, not the reply
    usage = body.get("usage") or {}
    return ChatResponse("".join(text), calls,
                        Usage(usage.get("input_tokens", 0), usage.get("output_tokens", 0)),
                        body.get("model") or model)


class AnthropicProvider(WireProvider):
    def __init__(self, model: str, api_key: str | None = None, *, base_url: str = DEFAULT_BASE_URL,
                 keys: KeyRing | None = None, temperature: float = 0.3,
                 max_tokens: int | None = None, timeout: float = 120.0, name: str = "anthropic",
                 tool_mode: ToolMode = "native", tool_memory: ToolSupportMemory | None = None,
                 transport: httpx.AsyncBaseTransport | None = None):
        super().__init__(name, model, tool_mode=tool_mode, tool_memory=tool_memory)
        self.base_url = base_url.rstrip("/").removesuffix("/v1")
        self.temperature = temperature
        self.max_tokens = max_tokens or DEFAULT_MAX_TOKENS
        keys = keys or KeyRing([api_key] if api_key else [])
        self.endpoint = HttpEndpoint(name, self.base_url, keys, timeout=timeout,
                                     transport=transport)

    def _headers(self) -> dict[str, str]:
        headers = {"anthropic-version": API_VERSION}
        if self.endpoint.keys.current:
            headers["x-api-key"] = self.endpoint.keys.current
        return headers

    def _payload(self, messages: list[ChatMessage], tools: list[ToolSpec] | None, model: str,
                 stream: bool) -> dict[str, Any]:
        system, turns = to_wire(messages)
        payload: dict[str, Any] = {"model": model, "max_tokens": self.max_tokens, "messages": turns,
                                   "temperature": self.temperature}
        if system:
            payload["system"] = system
        if tools:
            payload["tools"] = [tool_to_wire(t) for t in tools]
        if stream:
            payload["stream"] = True
        apply_caching(payload)
        return payload

    async def send(self, messages: list[ChatMessage], tools: list[ToolSpec] | None,
                   model: str) -> ChatResponse:
        body = await self.endpoint.post_json("/v1/messages",
                                             self._payload(messages, tools, model, False),
                                             headers=self._headers())
        return parse_response(body, model)

    async def send_stream(self, messages: list[ChatMessage], tools: list[ToolSpec] | None,
                          model: str) -> AsyncIterator[StreamEvent]:
        payload = self._payload(messages, tools, model, True)
        text: list[str] = []
        blocks: dict[int, dict[str, Any]] = {}
        input_tokens = output_tokens = 0
        answered_by, stopped = model, False
        async with self.endpoint.stream_lines("/v1/messages", payload,
                                              headers=self._headers()) as lines:
            async for event in keep_partial(iter_sse(lines), text):
                data = decode_chunk(event.data, self.name)
                kind = data.get("type", event.event)
                if kind == "message_start":
                    message = data.get("message") or {}
                    answered_by = message.get("model") or answered_by
                    input_tokens = (message.get("usage") or {}).get("input_tokens", 0)
                elif kind == "content_block_start":
                    blocks[data.get("index", len(blocks))] = dict(data.get("content_block") or {},
                                                                  partial_json="")
                elif kind == "content_block_delta":
                    delta = data.get("delta") or {}
                    if delta.get("type") == "text_delta" and delta.get("text"):
                        text.append(delta["text"])
                        yield TextDelta(delta["text"])
                    elif delta.get("type") == "input_json_delta":
                        blocks.setdefault(data.get("index", 0), {"partial_json": ""})[
                            "partial_json"] += delta.get("partial_json", "")
                elif kind == "message_delta":
                    output_tokens = (data.get("usage") or {}).get("output_tokens", output_tokens)
                elif kind == "message_stop":
                    stopped = True
                    break
                elif kind == "error":
                    raise self.endpoint.http_error(_status_of(data), event.data.encode(),
                                                   httpx.Headers())
        if not stopped:
            raise StreamInterrupted(f"{self.name} stream ended before message_stop", "".join(text))
        calls = [ToolCall(b.get("id", f"toolu_{i}"), b.get("name", ""), b["partial_json"] or "{}")
                 for i, b in sorted(blocks.items()) if b.get("type") == "tool_use"]
        for call in calls:
            yield ToolCallReady(call)
        yield StreamDone(ChatResponse("".join(text), calls, Usage(input_tokens, output_tokens),
                                      answered_by))


def _status_of(error_event: dict[str, Any]) -> int:
    """The HTTP status Anthropic uses for an error type sent inside a stream."""
    kind = (error_event.get("error") or {}).get("type", "")
    return {"overloaded_error": 529, "rate_limit_error": 429, "api_error": 500,
            "invalid_request_error": 400, "authentication_error": 401}.get(kind, 500)
