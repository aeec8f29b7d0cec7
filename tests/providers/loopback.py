"""A small HTTP/1.1 server on 127.0.0.1 for the wire-format fakes: keep-alive, JSON replies,
chunked SSE streams, and a connection cut mid-stream (the socket aborted mid-body)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlsplit

REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found",
           429: "Too Many Requests", 500: "Internal Server Error", 503: "Service Unavailable",
           529: "Overloaded"}


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes
    connection: int

    @property
    def json(self):
        return json.loads(self.body)


@dataclass
class Reply:
    status: int = 200
    body: object = None
    headers: dict[str, str] = field(default_factory=dict)
    sse: list[str] | None = None
    """Raw SSE event texts (each ends with a blank line); sent chunked when set."""
    cut_after: int | None = None
    """Abort the connection after this many SSE events, without ending the body."""


Handler = Callable[[Request], Awaitable[Reply]]


class LoopbackServer:
    def __init__(self, handler: Handler):
        self.handler = handler
        self.requests: list[Request] = []
        self.connections = 0
        self._server: asyncio.AbstractServer | None = None

    @property
    def url(self) -> str:
        host, port = self._server.sockets[0].getsockname()[:2]
        return f"http://{host}:{port}"

    async def __aenter__(self) -> LoopbackServer:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return self

    async def __aexit__(self, *exc) -> None:
        self._server.close()
        await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        connection = self.connections
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                request = self._parse(head, connection)
                length = int(request.headers.get("content-length", "0"))
                request.body = await reader.readexactly(length) if length else b""
                self.requests.append(request)
                reply = await self.handler(request)
                if not await self._send(writer, reply):
                    return
        finally:
            writer.close()

    @staticmethod
    def _parse(head: bytes, connection: int) -> Request:
        lines = head.decode("latin-1").split("\r\n")
        method, target, _ = lines[0].split(" ", 2)
        headers = {}
        for line in lines[1:]:
            if line:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
        parts = urlsplit(target)
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        return Request(method, parts.path, query, headers, b"", connection)

    @staticmethod
    async def _send(writer: asyncio.StreamWriter, reply: Reply) -> bool:
        status = f"HTTP/1.1 {reply.status} {REASONS.get(reply.status, 'Status')}\r\n"
        extra = "".join(f"{k}: {v}\r\n" for k, v in reply.headers.items())
        if reply.sse is None:
            body = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
            writer.write(f"{status}Content-Type: application/json\r\nContent-Length: {len(body)}"
                         f"\r\n{extra}\r\n".encode() + body)
            await writer.drain()
            return True
        writer.write(f"{status}Content-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n"
                     f"Cache-Control: no-cache\r\n{extra}\r\n".encode())
        for count, event in enumerate(reply.sse):
            if reply.cut_after is not None and count >= reply.cut_after:
                await writer.drain()
                writer.transport.abort()
                return False
            data = event.encode()
            writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            await writer.drain()
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        return True
