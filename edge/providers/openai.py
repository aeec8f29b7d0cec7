"""OpenAI-compatible chat completions over httpx, with native tool calling.

Serves OpenAI, Ollama (``http://127.0.0.1:11434/v1``), OpenRouter, llama.cpp server and any
endpoint that speaks ``POST {base_url}/chat/completions``. A base URL without a path gets ``/v1``.
"""

from __future__ import annotations

import json
from urllib.parse import urlsplit

import httpx

from edge.providers.base import ChatMessage, ChatResponse, ProviderError, ToolCall, Usage
from edge.tools.base import ToolSpec

ERROR_TEXT_LIMIT = 300


def normalise_base_url(base_url: str) -> str:
    url = base_url.rstrip("/")
    if urlsplit(url).path in ("", "/"):
        url += "/v1"
    return url


def to_wire(message: ChatMessage) -> dict:
    wire: dict = {"role": message.role, "content": message.content}
    if message.tool_calls:
        wire["content"] = message.content or None
        wire["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in message.tool_calls
        ]
    if message.tool_call_id:
        wire["tool_call_id"] = message.tool_call_id
    return wire


def tool_to_wire(spec: ToolSpec) -> dict:
    return {"type": "function",
            "function": {"name": spec.name, "description": spec.description,
                         "parameters": spec.parameters}}


def parse_response(body: dict) -> ChatResponse:
    try:
        message = body["choices"][0]["message"]
    except (KeyError, IndexError, TypeError):
        raise ProviderError("provider returned a response without choices[0].message") from None
    calls = []
    for i, call in enumerate(message.get("tool_calls") or []):
        function = call.get("function") or {}
        arguments = function.get("arguments")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments or {})
        calls.append(ToolCall(call.get("id") or f"call_{i}", function.get("name", ""), arguments))
    usage = body.get("usage") or {}
    return ChatResponse(message.get("content") or "", calls,
                        Usage(usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0)))


def _error_detail(response: httpx.Response) -> str:
    try:
        error = response.json().get("error")
        text = error.get("message") if isinstance(error, dict) else str(error)
    except (ValueError, AttributeError):
        text = response.text
    return (text or response.reason_phrase or "")[:ERROR_TEXT_LIMIT]


class OpenAICompatibleProvider:
    name = "openai"

    def __init__(self, base_url: str, model: str, api_key: str | None = None, *,
                 temperature: float = 0.3, timeout: float = 120.0,
                 transport: httpx.AsyncBaseTransport | None = None):
        self.base_url = normalise_base_url(base_url)
        self.model = model
        self.temperature = temperature
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.AsyncClient(base_url=self.base_url, headers=headers,
                                         timeout=timeout, transport=transport)

    async def chat(self, messages: list[ChatMessage], tools: list[ToolSpec] | None = None) -> ChatResponse:
        payload: dict = {"model": self.model, "messages": [to_wire(m) for m in messages],
                         "temperature": self.temperature}
        if tools:
            payload["tools"] = [tool_to_wire(t) for t in tools]
        try:
            response = await self._client.post("/chat/completions", json=payload)
        except httpx.TimeoutException:
            raise ProviderError(f"provider at {self.base_url} timed out") from None
        except httpx.HTTPError as exc:
            raise ProviderError(f"cannot reach provider at {self.base_url} "
                                f"({type(exc).__name__}); is it running?") from None
        if response.status_code >= 400:
            raise ProviderError(f"provider returned HTTP {response.status_code}: "
                                f"{_error_detail(response)}")
        try:
            body = response.json()
        except ValueError:
            raise ProviderError("provider returned a body that is not JSON") from None
        return parse_response(body)

    async def aclose(self) -> None:
        await self._client.aclose()
