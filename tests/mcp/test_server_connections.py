"""The MCP HTTP server's connection bounds, on real loopback sockets: a request head never
finished (nothing sent, or a byte now and then) is closed at ``header_timeout_seconds``, also on
a kept-alive connection; a kept-alive connection silent for ``idle_timeout_seconds`` is closed; a
newcomer beyond an address's share displaces that address's longest-waiting connection, never a
busy one and never another address's; what is not HTTP is a counted refusal, not a log line;
and the bookkeeping of :class:`ConnectionGuard`."""

from __future__ import annotations

import asyncio
import logging
import time

import pytest

from edge.config.mcp import McpConfig
from edge.mcp.server_connections import ConnectionGuard, RefusalLog
from tests.mcp.http_agent import free_port, http_session, until_listening

TOKEN = "claude-secret-0123456789"


def config(port: int, **keys: object) -> str:
    extra = "".join(f"{key} = {value}\n" for key, value in keys.items())
    return f"""
[channels.cli]
enabled = false
[security]
autonomy = "full"
[boards.gpio.pins]
GPIO17 = {{ mode = "output", safe = "off" }}
[mcp]
listen = "127.0.0.1:{port}"
{extra}[mcp.tokens]
claude = "{TOKEN}"
"""


async def connect(port: int, source: str = "127.0.0.1") -> tuple[asyncio.StreamReader,
                                                                 asyncio.StreamWriter]:
    return await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0))


async def closed_after(reader: asyncio.StreamReader, since: float, timeout: float = 10) -> float:
    """Seconds from ``since`` until the server closed the connection (whatever it sent first)."""
    while await asyncio.wait_for(reader.read(65536), timeout):
        pass
    return time.monotonic() - since


def head(port: int, path: str = "/nothing") -> bytes:
    return (f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            f"Authorization: Bearer {TOKEN}\r\n\r\n").encode()


async def test_a_head_never_finished_is_closed_at_the_deadline(start_agent):
    port = free_port()
    await start_agent(config(port, header_timeout_seconds=1))
    await until_listening(port)
    started = time.monotonic()
    silent, kept = await connect(port)  # (a writer let go closes its socket)
    trickling, writer = await connect(port)

    async def trickle() -> None:
        for byte in head(port):  # a whole head, a byte at a time: never whole within the deadline
            writer.write(bytes([byte]))
            await asyncio.sleep(0.2)

    trickler = asyncio.create_task(trickle())
    closes = await asyncio.gather(closed_after(silent, started), closed_after(trickling, started))
    trickler.cancel()
    assert all(1.0 <= seconds < 1.5 for seconds in closes), closes


async def test_kept_alive_connections_are_closed_when_silent_or_trickling(start_agent):
    port = free_port()
    await start_agent(config(port, header_timeout_seconds=1, idle_timeout_seconds=2))
    await until_listening(port)
    idle, idle_writer = await connect(port)
    trickling, writer = await connect(port)
    for stream in (idle_writer, writer):
        stream.write(head(port))
    answers = [await r.readuntil(b"\r\n\r\n") for r in (idle, trickling)]
    assert all(a.startswith(b"HTTP/1.1 404") for a in answers)  # answered, and kept alive
    answered = time.monotonic()
    writer.write(b"GET /noth")  # a next head begun, never finished
    closes = await asyncio.gather(closed_after(idle, answered), closed_after(trickling, answered))
    assert 1.9 <= closes[0] < 3.5, closes  # idle_timeout_seconds, rounded up to whole seconds
    assert 1.0 <= closes[1] < 1.5, closes  # header_timeout_seconds from the next head's first byte


async def test_a_newcomer_displaces_its_own_addresss_longest_waiting(start_agent):
    port = free_port()
    agent = await start_agent(config(port, max_connections_per_peer=2))
    await until_listening(port)
    async with http_session(port, TOKEN) as session:  # 127.0.0.1: another address
        writers = []  # (a writer let go closes its socket)

        async def half_open() -> asyncio.StreamReader:
            reader, writer = await connect(port, "127.0.0.3")
            writers.append(writer)
            await asyncio.sleep(0.05)
            return reader

        first, second, third = [await half_open() for _ in range(3)]
        assert await closed_after(first, time.monotonic(), timeout=2) < 1
        for still_open in (second, third):
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(still_open.read(1), 0.3)
        assert not (await session.call_tool("pin_read", {"pin": "GPIO17"})).is_error
    server = agent.runtime.mcp_http
    assert server is not None and server.refusals.totals["displaced"] == 1


class Conn:
    """A connection as the guard sees one."""

    def __init__(self, guard: ConnectionGuard, peer: str):
        self.guard = guard
        self.peer = peer
        self.closed_for: str | None = None

    def close(self, reason: str) -> None:
        self.closed_for = reason
        self.guard.refusals.refuse(reason, self.peer)
        self.guard.closed(self)  # type: ignore[arg-type]


async def test_the_guard_never_closes_a_busy_connection_for_a_newcomer():
    guard = ConnectionGuard(McpConfig(max_connections=3, max_connections_per_peer=2), RefusalLog())
    a1, a2, a3 = (Conn(guard, "a") for _ in range(3))
    assert guard.admit(a1) and guard.admit(a2)  # type: ignore[arg-type]
    guard.busy(a1)  # type: ignore[arg-type]
    assert guard.admit(a3)  # type: ignore[arg-type]
    assert (a1.closed_for, a2.closed_for) == (None, "displaced")  # a's waiting one, not a's busy
    guard.busy(a3)  # type: ignore[arg-type]
    a4 = Conn(guard, "a")
    assert not guard.admit(a4)  # type: ignore[arg-type]  # both of a's share are busy
    b1, c1 = Conn(guard, "b"), Conn(guard, "c")
    assert guard.admit(b1)  # type: ignore[arg-type]  # room in all (3)
    guard.waiting(a1)  # type: ignore[arg-type]  # answered: a1 waits for its next request
    assert guard.admit(c1)  # type: ignore[arg-type]  # all full: the longest waiting goes
    assert (b1.closed_for, a1.closed_for) == ("displaced", None)  # b waited longer than a1
    assert guard.open == 3 and guard.most_per_peer == 2
    assert guard.refusals.totals == {"displaced": 2, "busy": 1}


async def test_what_is_not_http_is_counted_not_logged(start_agent, caplog):
    port = free_port()
    agent = await start_agent(config(port))
    await until_listening(port)
    caplog.set_level(logging.INFO, logger="uvicorn")
    reader, writer = await connect(port)
    writer.write(b"NOT HTTP AT ALL\r\n\r\n")
    assert (await reader.read()).startswith(b"HTTP/1.1 400")
    writer.close()
    server = agent.runtime.mcp_http
    assert server is not None and server.refusals.totals["bad_request"] == 1
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING
                and r.name.startswith("uvicorn")]
