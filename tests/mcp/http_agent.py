"""The agent's MCP server over streamable HTTP as the tests reach it: a free port, waiting until
it listens, and a session of the SDK's own client (by token or by the client's own name)."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from mcp import types
from mcp.client.session import ClientSession, ElicitationFnT
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


async def until_listening(port: int, host: str = "127.0.0.1") -> None:
    for _ in range(500):
        try:
            _, writer = await asyncio.open_connection(host, port)
        except OSError:
            await asyncio.sleep(0.01)
            continue
        writer.close()
        return
    raise AssertionError(f"nothing listens on {host}:{port}")


@asynccontextmanager
async def http_session(port: int, token: str | None, host: str = "127.0.0.1",
                       client: str = "some-client",
                       elicitation: ElicitationFnT | None = None) -> AsyncIterator[ClientSession]:
    """An initialized session of the SDK's client, with ``token`` as its bearer token (None:
    none), naming itself ``client``; with ``elicitation`` it declares the capability and
    answers the server's elicitations with it."""
    headers = {"Authorization": f"Bearer {token}"} if token else None
    info = types.Implementation(name=client, version="1")
    async with (create_mcp_http_client(headers=headers) as http,
                streamable_http_client(f"http://{host}:{port}/mcp", http_client=http) as (read, write),
                ClientSession(read, write, client_info=info,
                              elicitation_callback=elicitation) as session):
        await session.initialize()
        yield session
