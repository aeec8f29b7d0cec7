"""Gemini ``generateContent`` over httpx: function declarations, SSE streaming
(``streamGenerateContent?alt=sse``), the key in the query string
(Gemini is the one API that takes ``?key=`` rather than a header; the key is masked in logs and
never appears in an error).

Gemini function calls carry no id of their own in older models, so ids are made up here, and a
tool result names its function (``functionResponse.name``), found from the earlier call's id. A
call's ``thoughtSignature`` is kept on the ToolCall and sent back with it: thinking models (Gemini
3) refuse a function-calling turn whose calls lost their signatures.
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

DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com"
FINISHED = "finishReason"


def to_wire(messages: list[ChatMessage]) -> tuple[str, list[dict[str, Any]]]:
    """The system instruction and the user/model contents, with function call/response parts."""
    names = {c.id: c.name for m in messages for c in m.tool_calls}
    system: list[str] = []
    contents: list[dict[str, Any]] = []
    parts: list[dict[str, Any]]
    for message in messages:
        if message.role == "system":
            system.append(message.content)
            continue
        if message.role == "tool":
            role = "user"
            parts = [{"functionResponse": {"name": names.get(message.tool_call_id or "", "tool"),
                                           "response": {"result": message.content}}}]
        else:
            role = "model" if message.role == "assistant" else "user"
            parts = [{"text": message.content}] if message.content else []
            parts += [_call_part(c) for c in message.tool_calls]
        if not parts:
            continue
        if contents and contents[-1]["role"] == role:
            contents[-1]["parts"].extend(parts)
        else:
            contents.append({"role": role, "parts": parts})
    return "\n\n".join(system), contents


def _call_part(call: ToolCall) -> dict[str, Any]:
    part: dict[str, Any] = {"functionCall": {"name": call.name, "args": call.arguments_object()}}
    if call.signature:
        part["thoughtSignature"] = call.signature
    return part


def tools_to_wire(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    return [{"functionDeclarations": [
        {"name": t.name, "description": t.description,
         "parameters": SchemaCleanr.clean(t.parameters, "gemini")} for t in tools]}]


def parts_of(chunk: dict[str, Any], label: str) -> tuple[list[dict[str, Any]], bool]:
    """The parts of the first candidate, and whether it carries a finish reason."""
    candidates = chunk.get("candidates")
    if not candidates:
        blocked = (chunk.get("promptFeedback") or {}).get("blockReason")
        if blocked:
            raise ProviderError(f"{label} refused the prompt (blockReason {blocked}); rephrase it")
        return [], False
    candidate = candidates[0]
    return (candidate.get("content") or {}).get("parts") or [], bool(candidate.get(FINISHED))


def _usage(chunk: dict[str, Any]) -> Usage | None:
    meta = chunk.get("usageMetadata")
    if not meta:
        return None
    return Usage(meta.get("promptTokenCount", 0), meta.get("candidatesTokenCount", 0))


def _call_from(part: dict[str, Any], index: int) -> ToolCall:
    call = part["functionCall"]
    return ToolCall(call.get("id") or f"gemini_call_{index}", call.get("name", ""),
                    json.dumps(call.get("args") or {}), part.get("thoughtSignature"))


def parse_response(body: dict[str, Any], model: str = "", label: str = "gemini") -> ChatResponse:
    parts, _ = parts_of(body, label)
    if not body.get("candidates"):
        raise ProviderError(f"{label} returned no candidates")
    text = "".join(p.get("text", "") for p in parts if "text" in p and not p.get("thought"))
    calls = [_call_from(p, i) for i, p in enumerate(q for q in parts if "functionCall" in q)]
    return ChatResponse(text, calls, _usage(body) or Usage(), body.get("modelVersion") or model)


class GeminiProvider(WireProvider):
    def __init__(self, model: str, api_key: str | None = None, *, base_url: str = DEFAULT_BASE_URL,
                 keys: KeyRing | None = None, temperature: float = 0.3,
                 max_tokens: int | None = None, timeout: float = 120.0, name: str = "gemini",
                 tool_mode: ToolMode = "native", tool_memory: ToolSupportMemory | None = None,
                 transport: httpx.AsyncBaseTransport | None = None):
        super().__init__(name, model, tool_mode=tool_mode, tool_memory=tool_memory)
        url = base_url.rstrip("/")
        self.base_url = url if url.endswith(("/v1beta", "/v1")) else url + "/v1beta"
        self.temperature = temperature
        self.max_tokens = max_tokens
        keys = keys or KeyRing([api_key] if api_key else [])
        self.endpoint = HttpEndpoint(name, self.base_url, keys, timeout=timeout,
                                     transport=transport)

    def _payload(self, messages: list[ChatMessage], tools: list[ToolSpec] | None) -> dict[str, Any]:
        system, contents = to_wire(messages)
        config: dict[str, Any] = {"temperature": self.temperature}
        if self.max_tokens:
            config["maxOutputTokens"] = self.max_tokens
        payload: dict[str, Any] = {"contents": contents, "generationConfig": config}
        if system:
            payload["systemInstruction"] = {"parts": [{"text": system}]}
        if tools:
            payload["tools"] = tools_to_wire(tools)
        return payload

    def _params(self, **extra: str) -> dict[str, str]:
        key = self.endpoint.keys.current
        return {**extra, "key": key} if key else extra

    async def send(self, messages: list[ChatMessage], tools: list[ToolSpec] | None,
                   model: str) -> ChatResponse:
        body = await self.endpoint.post_json(f"/models/{model}:generateContent",
                                             self._payload(messages, tools), params=self._params())
        return parse_response(body, model, self.name)

    async def send_stream(self, messages: list[ChatMessage], tools: list[ToolSpec] | None,
                          model: str) -> AsyncIterator[StreamEvent]:
        text: list[str] = []
        calls: list[ToolCall] = []
        usage, answered_by, finished = Usage(), model, False
        async with self.endpoint.stream_lines(f"/models/{model}:streamGenerateContent",
                                              self._payload(messages, tools),
                                              params=self._params(alt="sse")) as lines:
            async for event in keep_partial(iter_sse(lines), text):
                chunk = decode_chunk(event.data, self.name)
                if "error" in chunk:
                    raise self.endpoint.http_error(int(chunk["error"].get("code") or 500),
                                                   event.data.encode(), httpx.Headers())
                parts, done = parts_of(chunk, self.name)
                answered_by = chunk.get("modelVersion") or answered_by
                usage = _usage(chunk) or usage
                for part in parts:
                    if "functionCall" in part:
                        calls.append(_call_from(part, len(calls)))
                    elif part.get("text") and not part.get("thought"):
                        text.append(part["text"])
                        yield TextDelta(part["text"])
                finished = finished or done
        if not finished:
            raise StreamInterrupted(f"{self.name} stream ended without a finishReason",
                                    "".join(text))
        for call in calls:
            yield ToolCallReady(call)
        yield StreamDone(ChatResponse("".join(text), calls, usage, answered_by))
