"""A streamable HTTP MCP server's answers, bounded: the SDK's HTTP client with a limit on
what one answer may hold.

The SDK reads a JSON answer whole (a 20 MB result cost the agent 300 MB). Here each answer
body (``application/json``), and each event of an event stream, is kept up to the server's
``max_message_bytes``; a longer one is read no further and the request that asked gets an
error that says so, as a JSON-RPC error in its place. Answers are asked for uncompressed
(``Accept-Encoding: identity``): a compressed one could hold far more than its bytes, so one
is refused the same way.

>>> events = EventSplitter(limit=100)
>>> events.feed(b"event: message\\ndata: {}\\n\\nevent: mes")
[b'event: message\\ndata: {}\\n\\n']
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import AsyncIterator
from typing import Any

import httpx2
from mcp.shared._httpx_utils import MCP_DEFAULT_SSE_READ_TIMEOUT, MCP_DEFAULT_TIMEOUT

log = logging.getLogger(__name__)

EVENT_END = re.compile(rb"\r\n\r\n|\n\n|\r\r")


def bounded_http_client(headers: dict[str, str], server: str,
                        max_message_bytes: int) -> httpx2.AsyncClient:
    """The SDK's client settings (its timeouts), answers bounded by :class:`BoundedAnswers`."""
    return httpx2.AsyncClient(
        headers={"Accept-Encoding": "identity", **headers},
        timeout=httpx2.Timeout(MCP_DEFAULT_TIMEOUT, read=MCP_DEFAULT_SSE_READ_TIMEOUT),
        transport=BoundedAnswers(httpx2.AsyncHTTPTransport(), server, max_message_bytes))


class EventSplitter:
    """Splits an event stream into whole events; None once one grows past ``limit``."""

    def __init__(self, limit: int):
        self.limit = limit
        self._held = bytearray()

    def feed(self, chunk: bytes) -> list[bytes] | None:
        searched = max(0, len(self._held) - 3)
        self._held += chunk
        events: list[bytes] = []
        while found := EVENT_END.search(self._held, searched):
            events.append(bytes(self._held[:found.end()]))
            del self._held[:found.end()]
            searched = 0
        return None if len(self._held) > self.limit else events


class BoundedAnswers(httpx2.AsyncBaseTransport):
    def __init__(self, inner: httpx2.AsyncBaseTransport, server: str, limit: int):
        self.inner = inner
        self.server = server
        self.limit = limit

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self.inner.handle_async_request(request)
        kind = response.headers.get("content-type", "").lower()
        encoded = response.headers.get("content-encoding", "identity").lower() != "identity"
        headers = [(k, v) for k, v in response.headers.multi_items()
                   if k.lower() not in ("content-length", "content-encoding")]
        body = BoundedBody(response, self, _request_id(request),
                           kind.startswith("text/event-stream"), encoded)
        return httpx2.Response(response.status_code, headers=headers, stream=body,
                               request=request, extensions=response.extensions)

    async def aclose(self) -> None:
        await self.inner.aclose()

    def refused(self, request_id: Any, size: int, why: str = "") -> bytes:
        log.warning("mcp_message_refused server=%s bytes=%d limit=%d answer=%s", self.server,
                    size, self.limit, request_id is not None)
        said = why or (f"the server's answer was over the {self.limit} bytes this agent takes "
                       "from it (max_message_bytes): refused")
        return json.dumps({"jsonrpc": "2.0", "id": request_id,
                           "error": {"code": -32603, "message": said}}).encode()


class BoundedBody(httpx2.AsyncByteStream):
    def __init__(self, response: httpx2.Response, bounds: BoundedAnswers, request_id: Any,
                 events: bool, encoded: bool):
        self.response = response
        self.bounds = bounds
        self.request_id = request_id
        self.events = events
        self.encoded = encoded

    async def __aiter__(self) -> AsyncIterator[bytes]:
        if self.encoded:
            yield self._instead(0, "the server's answer was compressed, which this agent does "
                                   "not take (it asks for identity): refused")
            return
        splitter = EventSplitter(self.bounds.limit)
        body, size = bytearray(), 0
        async for chunk in self.response.aiter_raw():
            size += len(chunk)
            if self.events:
                events = splitter.feed(chunk)
                if events is None:
                    yield self._instead(size)
                    return
                for event in events:
                    yield event
            elif size > self.bounds.limit:
                yield self._instead(size)
                return
            else:
                body += chunk
        if not self.events:
            yield bytes(body)

    def _instead(self, size: int, why: str = "") -> bytes:
        """The error in place of the answer (an event, in an event stream)."""
        error = self.bounds.refused(self.request_id, size, why)
        return b"event: message\ndata: " + error + b"\n\n" if self.events else error

    async def aclose(self) -> None:
        await self.response.aclose()


def _request_id(request: httpx2.Request) -> Any:
    """The JSON-RPC id of the message a POST carries (None for others)."""
    if request.method != "POST":
        return None
    try:
        message = json.loads(request.content)
    except (ValueError, httpx2.RequestNotRead):
        return None
    return message.get("id") if isinstance(message, dict) else None
