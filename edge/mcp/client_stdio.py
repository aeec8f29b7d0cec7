"""A stdio MCP server's pipes, bounded: the SDK's stdio transport with limits on what the
server may send.

The SDK's own ``stdio_client`` keeps a whole line, however long, before parsing it: a 50 MB
result costs the agent 150 MB and its event loop for seconds. Here each message (one line of
JSON-RPC) is kept up to the server's ``max_message_bytes``; a longer one is read past and
dropped as it arrives. When its first bytes show it is the answer to a request (its ``id``),
that request gets an error saying so, and the session goes on; otherwise the connection is
closed and the link restarts the server.

The server's stderr is not the agent's: each line reaches the log as a field of its own event,
``mcp_server_output server=NAME line="..."``, quoted (no raw newlines or control characters,
so it cannot forge a log line), cut at :data:`OUTPUT_LINE_CHARS`, and at most
:data:`OUTPUT_LINES_PER_SECOND` lines a second: the rest are counted and said
(``mcp_server_output server=NAME dropped=K``).

>>> lines = BoundedLines(limit=8, keep=4)
>>> lines.feed(b'{"a":1}\\n{"id":')
[b'{"a":1}']
>>> lines.feed(b'7,"result":"long"}\\n')
[Oversize(head=b'{"id', size=24)]
>>> quoted('INFO edge.hardware actuation\\n\\x1b[2J')
'"INFO edge.hardware actuation\\\\n\\\\u001b[2J"'
"""

from __future__ import annotations

import json
import logging
import os
import re
import signal
import subprocess
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass

import anyio
import mcp_types as types
from anyio.abc import ByteReceiveStream, Process
from mcp.client._transport import TransportStreams
from mcp.shared.message import SessionMessage
from mcp_types import INTERNAL_ERROR, ErrorData, JSONRPCError

from edge.mcp.sandbox import Launch

log = logging.getLogger(__name__)

READ_BYTES = 65536
HEAD_BYTES = 256
"""How much of an over-long message is kept to find whose answer it was."""
OUTPUT_LINE_CHARS = 500
OUTPUT_LINES_PER_SECOND = 20
EXIT_SECONDS = 2.0
"""How long a server has to exit after its stdin closes, and again after SIGTERM."""
RESPONSE_ID = re.compile(rb'"id"\s*:\s*("(?:[^"\\]|\\.){0,64}"|-?\d{1,18})\s*[,}]')
REQUEST = re.compile(rb'"method"\s*:')


@dataclass(frozen=True)
class Oversize:
    """A line longer than the limit: its first bytes and its whole length."""

    head: bytes
    size: int


class BoundedLines:
    """Splits a byte stream into lines, keeping at most ``limit`` bytes of any one line."""

    def __init__(self, limit: int, keep: int = HEAD_BYTES):
        self.limit = limit
        self.keep = keep
        self._line = bytearray()
        self._over = 0
        self._head = b""

    def feed(self, chunk: bytes) -> list[bytes | Oversize]:
        done: list[bytes | Oversize] = []
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            piece = chunk[start:end] if end >= 0 else chunk[start:]
            if self._over:
                self._over += len(piece)
            elif len(self._line) + len(piece) > self.limit:
                self._head = (bytes(self._line) + piece[:self.keep])[:self.keep]
                self._over = len(self._line) + len(piece)
                self._line = bytearray()
            else:
                self._line += piece
            if end < 0:
                return done
            if self._over:
                done.append(Oversize(self._head, self._over))
                self._over = 0
            elif self._line.strip():
                done.append(bytes(self._line))
            self._line = bytearray()
            start = end + 1

    def rest(self) -> list[bytes | Oversize]:
        """What was left without a final newline."""
        return self.feed(b"\n")


def quoted(text: str) -> str:
    """``text`` in double quotes with every quote, backslash and unprintable character
    escaped: one field of one log line, whatever it holds."""
    def escape(char: str) -> str:
        if char.isprintable() and char not in '"\\':
            return char
        return json.dumps(char)[1:-1] if ord(char) < 0x80 else f"\\u{ord(char):04x}"
    return '"' + "".join(escape(c) for c in text) + '"'


class ServerOutput:
    """A server's stderr lines as log events, quoted, cut and rate-bounded."""

    def __init__(self, server: str, per_second: int = OUTPUT_LINES_PER_SECOND):
        self.server = server
        self.per_second = per_second
        self.dropped = 0
        self._window = 0.0
        self._count = 0

    def line(self, raw: bytes | Oversize) -> None:
        now = time.monotonic()
        if now - self._window >= 1.0:
            self.flush()
            self._window, self._count = now, 0
        self._count += 1
        if self._count > self.per_second:
            self.dropped += 1
            return
        data, size = (raw.head, raw.size) if isinstance(raw, Oversize) else (raw, len(raw))
        text = data.decode("utf-8", "replace").rstrip("\r")
        cut = size - len(data) + max(0, len(text) - OUTPUT_LINE_CHARS)
        log.info("mcp_server_output server=%s line=%s%s", self.server,
                 quoted(text[:OUTPUT_LINE_CHARS]), f" cut={cut}" if cut > 0 else "")

    def flush(self) -> None:
        if self.dropped:
            log.warning("mcp_server_output server=%s dropped=%d", self.server, self.dropped)
            self.dropped = 0


def refusal(head: bytes, size: int, limit: int) -> SessionMessage | None:
    """An error answer, in place of an over-long answer to one of our requests (None when the
    line is not an answer whose id shows in its first bytes)."""
    found = RESPONSE_ID.search(head)
    if found is None or REQUEST.search(head):
        return None
    request_id = json.loads(found.group(1))
    error = ErrorData(code=INTERNAL_ERROR, message=f"the server's answer was {size} bytes, over "
                      f"the {limit} this agent takes from it (max_message_bytes): refused")
    return SessionMessage(JSONRPCError(jsonrpc="2.0", id=request_id, error=error))


def parse(line: bytes) -> SessionMessage | Exception:
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError as exc:
        return exc


@asynccontextmanager
async def bounded_stdio(start: Launch, server: str,
                        max_message_bytes: int) -> AsyncIterator[TransportStreams]:
    """Starts the server as ``start`` says and yields the session's streams (a Transport)."""
    process = await anyio.open_process(start.argv, env=start.env, cwd=start.cwd,
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE, start_new_session=True)
    to_session, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, from_session = anyio.create_memory_object_stream[SessionMessage](0)
    output = ServerOutput(server)

    async def read_stdout() -> None:
        assert process.stdout is not None
        lines = BoundedLines(max_message_bytes)
        async with to_session:
            async for chunk in _chunks(process.stdout):
                for line in lines.feed(chunk):
                    if isinstance(line, bytes):
                        await to_session.send(parse(line))
                        continue
                    answer = refusal(line.head, line.size, max_message_bytes)
                    log.warning("mcp_message_refused server=%s bytes=%d limit=%d answer=%s",
                                server, line.size, max_message_bytes, answer is not None)
                    if answer is None:
                        return  # whose it was is unknown: the session ends, the link restarts
                    await to_session.send(answer)

    async def read_stderr() -> None:
        assert process.stderr is not None
        lines = BoundedLines(OUTPUT_LINE_CHARS * 4, keep=OUTPUT_LINE_CHARS * 4)
        while True:
            chunk: bytes | None = b""
            with anyio.move_on_after(1.0) as quiet:
                chunk = await _receive(process.stderr)
            if quiet.cancelled_caught:
                output.flush()  # a flood that stopped: say what it dropped
                continue
            if chunk is None:
                break
            for line in lines.feed(chunk):
                output.line(line)
        for line in lines.rest():
            output.line(line)
        output.flush()

    async def write_stdin() -> None:
        assert process.stdin is not None
        try:
            async with from_session:
                async for message in from_session:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await process.stdin.send(data.encode() + b"\n")
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await to_session.aclose()

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(read_stdout)
        tasks.start_soon(read_stderr)
        tasks.start_soon(write_stdin)
        try:
            yield read_stream, write_stream
        finally:
            with anyio.CancelScope(shield=True):
                await write_stream.aclose()
                await read_stream.aclose()
                await _stop(process)
            tasks.cancel_scope.cancel()


async def _chunks(stream: ByteReceiveStream) -> AsyncIterator[bytes]:
    with suppress(anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError,
                  OSError):
        while True:
            yield await stream.receive(READ_BYTES)


async def _receive(stream: ByteReceiveStream) -> bytes | None:
    """The next chunk, or None at the end."""
    try:
        return await stream.receive(READ_BYTES)
    except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
        return None


async def _stop(process: Process) -> None:
    """Close stdin, give the server time to exit, then SIGTERM its process group, then SIGKILL."""
    if process.stdin is not None:
        with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            await process.stdin.aclose()
    for sig in (None, signal.SIGTERM, signal.SIGKILL):
        if sig is not None:
            with suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, sig)
        with anyio.move_on_after(EXIT_SECONDS):
            while process.returncode is None:
                await anyio.sleep(0.01)
        if process.returncode is not None:
            break
    for pipe in (process.stdout, process.stderr):
        if pipe is not None:
            with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                await pipe.aclose()
