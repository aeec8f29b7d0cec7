"""What the three wire formats share: one httpx client per endpoint (connection reuse), error
mapping (429/5xx retryable, ``Retry-After`` honoured, keys and bodies never shown), and the switch
between native tools and the prompt-guided protocol.

A wire module subclasses :class:`WireProvider` and writes ``send`` and ``send_stream``.
"""

from __future__ import annotations

import email.utils
import json
import logging
import re
import time
from abc import abstractmethod
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any, Literal, TypeVar

import httpx

from edge.core.httpclient import async_client
from edge.core.messages import ChatMessage, ToolSpec
from edge.providers.base import (
    ChatResponse,
    Provider,
    ProviderError,
    StreamDone,
    StreamEvent,
    StreamInterrupted,
    TextDelta,
    ToolCallReady,
)
from edge.providers.keys import KeyRing
from edge.providers.prompt_guided import GuidedTextFilter, ToolSupportMemory, parse_tool_calls, render_guided

ERROR_TEXT_LIMIT = 300
_QUERY_KEY = re.compile(r"([?&]key=)[^&\s\"']+")
RETRY_AFTER_CAP_SECONDS = 120.0
ToolMode = Literal["auto", "native", "prompt"]
T = TypeVar("T")


class RedactQueryKeys(logging.Filter):
    """httpx logs each request's URL at INFO; Gemini's carries ``?key=``: mask it."""

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        if "key=" in text:
            record.msg, record.args = _QUERY_KEY.sub(r"\1***", text), ()
        return True


logging.getLogger("httpx").addFilter(RedactQueryKeys())


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header: delta-seconds or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value).timestamp()
        except (TypeError, ValueError):
            return None
        seconds = when - (time.time() if now is None else now)
    return min(max(seconds, 0.0), RETRY_AFTER_CAP_SECONDS)


def error_detail(body: bytes) -> str:
    """The human part of an error body in any of the three formats (or Ollama's string)."""
    try:
        parsed = json.loads(body)
    except ValueError:
        return body.decode("utf-8", "replace").strip()
    error = parsed.get("error", parsed) if isinstance(parsed, dict) else parsed
    if isinstance(error, dict):
        return str(error.get("message") or error.get("type") or "")
    return str(error)


class HttpEndpoint:
    """One base URL, one pooled client; every failure becomes a sanitised ProviderError."""

    def __init__(self, label: str, base_url: str, keys: KeyRing, *, timeout: float,
                 transport: httpx.AsyncBaseTransport | None = None):
        self.label = label
        self.base_url = base_url
        self.keys = keys
        self.client = async_client(base_url, base_url=base_url, transport=transport,
                                   timeout=httpx.Timeout(timeout, connect=min(timeout, 15.0)))

    def http_error(self, status: int, body: bytes, headers: httpx.Headers) -> ProviderError:
        detail = self.keys.redact(error_detail(body))[:ERROR_TEXT_LIMIT]
        retry_after = parse_retry_after(headers.get("retry-after"))
        retryable = status in (408, 409, 425, 429) or status >= 500
        return ProviderError(f"provider returned HTTP {status} from {self.label}: "
                             f"{detail or 'no detail'}",
                             status=status, retry_after=retry_after, retryable=retryable)

    def network_error(self, exc: httpx.HTTPError) -> ProviderError:
        # str(exc) can carry the URL, and Gemini's URL carries the key: name the type only.
        if isinstance(exc, httpx.TimeoutException):
            return ProviderError(f"{self.label} timed out ({type(exc).__name__})", retryable=True)
        return ProviderError(f"cannot reach provider {self.label} at {self.base_url} "
                             f"({type(exc).__name__}); is it running, and is base_url right?",
                             retryable=True)

    async def post_json(self, path: str, payload: dict[str, Any], *,
                        headers: dict[str, str] | None = None,
                        params: dict[str, str] | None = None) -> dict[str, Any]:
        try:
            response = await self.client.post(path, json=payload, headers=headers, params=params)
        except httpx.HTTPError as exc:
            raise self.network_error(exc) from None
        if response.status_code >= 400:
            raise self.http_error(response.status_code, response.content, response.headers)
        try:
            body = response.json()
        except ValueError:
            raise ProviderError(f"{self.label} returned a body that is not JSON") from None
        if not isinstance(body, dict):
            raise ProviderError(f"{self.label} returned JSON that is not an object")
        return body

    @asynccontextmanager
    async def stream_lines(self, path: str, payload: dict[str, Any], *,
                           headers: dict[str, str] | None = None,
                           params: dict[str, str] | None = None) -> AsyncIterator[AsyncIterator[str]]:
        """The response's lines; a connection lost midway raises :class:`StreamInterrupted`."""
        request = self.client.build_request("POST", path, json=payload, headers=headers,
                                            params=params)
        try:
            response = await self.client.send(request, stream=True)
        except httpx.HTTPError as exc:
            raise self.network_error(exc) from None
        try:
            if response.status_code >= 400:
                body = await response.aread()
                raise self.http_error(response.status_code, body, response.headers)
            yield self._guarded(response.aiter_lines())
        finally:
            await response.aclose()

    async def _guarded(self, lines: AsyncIterator[str]) -> AsyncIterator[str]:
        try:
            async for line in lines:
                yield line
        except httpx.HTTPError as exc:
            raise StreamInterrupted(f"{self.label} stream was cut off ({type(exc).__name__})"
                                    ) from None

    async def aclose(self) -> None:
        await self.client.aclose()


async def keep_partial(events: AsyncIterator[T], text: list[str]) -> AsyncIterator[T]:
    """Pass events through; a cut-off stream's error carries the text received so far."""
    try:
        async for event in events:
            yield event
    except StreamInterrupted as exc:
        exc.partial_text = "".join(text)
        raise


def decode_chunk(data: str, label: str) -> dict[str, Any]:
    try:
        chunk = json.loads(data)
    except ValueError:
        raise ProviderError(f"{label} sent a stream event that is not JSON") from None
    if not isinstance(chunk, dict):
        raise ProviderError(f"{label} sent a stream event that is not a JSON object")
    return chunk


def looks_like_tools_rejection(error: ProviderError) -> bool:
    """An endpoint refusing the ``tools`` parameter itself (Ollama "does not support tools",
    llama.cpp "tools param requires --jinja", "unknown parameter: tools"...)."""
    if error.status not in (400, 404, 422, 500, 501):
        return False
    text = str(error).lower()
    return "tool" in text and any(word in text for word in (
        "not support", "unsupported", "unknown", "unrecognized", "unrecognised",
        "not allowed", "not permitted", "extra", "requires", "unexpected"))


class WireProvider(Provider):
    """Native tools when the endpoint takes them, the ``<tool_call>`` protocol when it does not.

    ``tool_mode``: ``auto`` tries native and falls back for good on a rejection (remembered per
    endpoint and model in ``tool_memory``), ``native`` never falls back, ``prompt`` always guides.
    """

    endpoint: HttpEndpoint
    name: str = "provider"
    model: str = ""

    def __init__(self, name: str, model: str, *, tool_mode: ToolMode = "auto",
                 tool_memory: ToolSupportMemory | None = None):
        self.name = name
        self.model = model
        self.tool_mode = tool_mode
        self.tool_memory = tool_memory or ToolSupportMemory()

    @abstractmethod
    async def send(self, messages: list[ChatMessage], tools: list[ToolSpec] | None,
                   model: str) -> ChatResponse:
        raise NotImplementedError

    @abstractmethod
    def send_stream(self, messages: list[ChatMessage], tools: list[ToolSpec] | None,
                    model: str) -> AsyncIterator[StreamEvent]:
        raise NotImplementedError

    def rotate_key(self) -> bool:
        """The endpoint's next API key, round-robin (see :class:`KeyRing`)."""
        return self.endpoint.keys.rotate()

    def _memory_key(self, model: str) -> str:
        return f"{self.endpoint.base_url}#{model}"

    def _guided(self, tools: list[ToolSpec] | None, model: str) -> bool:
        return bool(tools) and (self.tool_mode == "prompt" or (
            self.tool_mode == "auto" and self.tool_memory.rejects(self._memory_key(model))))

    def _note_rejection(self, error: ProviderError, tools: list[ToolSpec] | None,
                        model: str) -> bool:
        if not tools or self.tool_mode != "auto" or not looks_like_tools_rejection(error):
            return False
        self.tool_memory.remember_rejection(self._memory_key(model))
        return True

    async def chat(self, messages: Sequence[ChatMessage], tools: list[ToolSpec] | None = None,
                   *, model: str | None = None) -> ChatResponse:
        model = model or self.model
        flat = list(messages)
        if not self._guided(tools, model):
            try:
                return await self.send(flat, tools or None, model)
            except ProviderError as exc:
                if not self._note_rejection(exc, tools, model):
                    raise
        response = await self.send(render_guided(flat, tools or []), None, model)
        response.text, response.tool_calls = parse_tool_calls(response.text)
        return response

    async def stream(self, messages: Sequence[ChatMessage], tools: list[ToolSpec] | None = None,
                     *, model: str | None = None) -> AsyncIterator[StreamEvent]:
        model = model or self.model
        flat = list(messages)
        if not self._guided(tools, model):
            events = self.send_stream(flat, tools or None, model)
            try:
                first = await anext(events)
            except ProviderError as exc:
                if not self._note_rejection(exc, tools, model):
                    raise
            else:
                yield first
                async for event in events:
                    yield event
                return
        shown = GuidedTextFilter()
        async for event in self.send_stream(render_guided(flat, tools or []), None, model):
            if isinstance(event, TextDelta):
                if visible := shown.feed(event.text):
                    yield TextDelta(visible)
            elif isinstance(event, StreamDone):
                response = event.response
                response.text, response.tool_calls = parse_tool_calls(response.text)
                for call in response.tool_calls:
                    yield ToolCallReady(call)
                yield StreamDone(response)

    async def aclose(self) -> None:
        await self.endpoint.aclose()
