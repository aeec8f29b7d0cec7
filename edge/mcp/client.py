"""Links to other MCP servers (``[[mcp.servers]]``), through the official SDK's client.

One :class:`ServerLink` per server: a stdio server is started as a subprocess (``command``,
``args``, ``env``), a streamable HTTP server is reached at its ``url`` with ``headers``. Each link
runs in a :class:`~edge.core.supervision.SupervisedTask` (``mcp-client-<name>``): it connects, lists the
server's tools, then holds the session, pinging it now and then; a server that cannot start, stops
answering or dies ends the task, which starts it again after a backoff (1 s doubling to 60 s).
Meanwhile its tools answer with an error that says so, and status shows the link down.

A call (:meth:`ServerLink.call`) waits at most the server's ``timeout_seconds``: a hung tool
costs the turn that long and an error result, never the agent; the session stays (the server is
alive, one of its tools is slow). A call that finds the connection gone marks the link broken,
so the task restarts it at once rather than at the next ping.

This module imports the SDK: it is loaded only when ``[[mcp.servers]]`` is configured
(:meth:`edge.assembly.AgentAssembly.start_mcp_servers`).

Errors, all :class:`~edge.core.exc.EdgeError`::

    RemoteToolError           the server answered the call with an error (the model sees it)
    ├── ServerUnavailable     not connected now (starting, restarting); says why
    └── CallTimedOut          no answer within timeout_seconds
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import Any

from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED, CallToolResult, Implementation, Tool

from edge import __version__
from edge.config.mcp import McpServerConfig
from edge.core.exc import EdgeError
from edge.core.supervision import SupervisedTask

log = logging.getLogger(__name__)

PING_SECONDS = 30.0
"""How often an idle session is pinged (a server that died between calls is found by then)."""
CONNECT_SECONDS = 15.0
"""At least this long for a server to start and list its tools (a call's ``timeout_seconds``
may be shorter than a process takes to start)."""
MAX_LIST_PAGES = 50


class RemoteToolError(EdgeError):
    """A remote tool could not be called, or its server answered with an error."""


class ServerUnavailable(RemoteToolError):
    """The server is not connected now (starting, or restarting after a failure)."""


class CallTimedOut(RemoteToolError):
    """The server gave no answer within its ``timeout_seconds``."""


class ServerLost(EdgeError):
    """The session ended (the process died, the connection closed): the link is restarted."""


@dataclass(frozen=True)
class RemoteToolInfo:
    """One tool as the server lists it."""

    name: str
    description: str
    input_schema: dict[str, Any]
    read_only: bool
    """The server marks it ``readOnlyHint: true`` (MCP's default is false)."""

    @classmethod
    def of(cls, tool: Tool) -> RemoteToolInfo:
        hints = tool.annotations
        return cls(tool.name, tool.description or tool.title or "", dict(tool.input_schema),
                   bool(hints is not None and hints.read_only_hint))


def _leaf_message(exc: BaseException) -> str:
    """The first real error inside task groups' exception groups, as ``Type: message``."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, EdgeError):
        return str(exc)
    if isinstance(exc, TimeoutError):
        return "no answer in time"
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


class ServerLink:
    """A configured server, connected and restarted by its supervised task."""

    def __init__(self, config: McpServerConfig, *, backoff_start: float | None = None,
                 backoff_max: float | None = None,
                 on_change: Callable[[], None] | None = None):
        self.config = config
        self.name = config.name
        self.tools: dict[str, RemoteToolInfo] = {}
        """The server's tools as last listed (kept while it is down, for their schemas)."""
        self.connected = False
        self.since: float | None = None
        """When the link last came up or went down."""
        self.last_error: str | None = None
        self.listed = asyncio.Event()
        """Set once a first attempt to connect has ended, either way (start-up waits on it)."""
        self._client: Client | None = None
        self._broken = asyncio.Event()
        self.task = SupervisedTask(f"mcp-client-{config.name}", self._run, backoff_start=backoff_start,
                                   backoff_max=backoff_max, on_change=on_change)

    # the session, held by the supervised task ---------------------------------------------------

    async def _run(self) -> None:
        self._broken = asyncio.Event()
        try:
            async with AsyncExitStack() as stack:
                async with asyncio.timeout(max(self.config.timeout_seconds, CONNECT_SECONDS)):
                    client = await self._connect(stack)
                    tools = await self._list(client)
                self.tools = {t.name: RemoteToolInfo.of(t) for t in tools}
                self._up(client)
                await self._hold(client)
        except Exception as exc:
            raise self._down(_leaf_message(exc)) from exc
        finally:
            self._client = None
            self.connected = False
            self.listed.set()

    async def _connect(self, stack: AsyncExitStack) -> Client:
        cfg = self.config
        info = Implementation(name="edge-agent", version=__version__)
        if cfg.url is not None:
            http = create_mcp_http_client(
                headers={k: v.get_secret_value() for k, v in cfg.headers.items()})
            await stack.enter_async_context(http)
            client = Client(streamable_http_client(cfg.url, http_client=http), client_info=info)
        else:
            assert cfg.command is not None  # the config allows exactly one of url and command
            params = StdioServerParameters(command=cfg.command, args=list(cfg.args),
                                           env=dict(cfg.env) or None)
            client = Client(params, client_info=info)
        return await stack.enter_async_context(client)

    async def _list(self, client: Client) -> list[Tool]:
        tools: list[Tool] = []
        cursor: str | None = None
        for _ in range(MAX_LIST_PAGES):
            page = await client.list_tools(cursor=cursor)
            tools += page.tools
            cursor = page.next_cursor
            if not cursor:
                break
        return tools

    async def _hold(self, client: Client) -> None:
        """Until the session breaks: a failed call says so, a ping finds it between calls."""
        while True:
            try:
                await asyncio.wait_for(self._broken.wait(), PING_SECONDS)
            except TimeoutError:
                async with asyncio.timeout(self.config.timeout_seconds):
                    await client.send_ping()
                continue
            raise ServerLost(self.last_error or "the connection closed")

    def _up(self, client: Client) -> None:
        self._client = client
        self.connected = True
        self.since = time.time()
        self.listed.set()
        missing = [t for t in self.config.allow if t not in self.tools]
        log.info("mcp_connected server=%s transport=%s tools=%d allowed=%d missing=%s",
                 self.name, self.config.transport, len(self.tools), len(self.config.allow),
                 ",".join(missing) or "none")

    def _down(self, why: str) -> ServerLost:
        if self.connected or self.since is None or self.last_error != why:
            self.since = time.time()
        self.connected = False
        self._client = None
        self.last_error = why
        log.warning("mcp_down server=%s error=%r", self.name, why)
        return ServerLost(why)

    # calls, from the agent's turns ----------------------------------------------------------------

    def unavailable(self) -> str:
        why = f": {self.last_error}" if self.last_error else ""
        return (f"MCP server {self.name} is not connected{why}; it is being restarted, so its "
                "tools are unavailable for now")

    async def call(self, tool: str, arguments: dict[str, Any]) -> CallToolResult:
        """Call ``tool`` within the server's ``timeout_seconds``; raises a RemoteToolError."""
        client = self._client
        if client is None or not self.connected:
            raise ServerUnavailable(self.unavailable())
        timeout = self.config.timeout_seconds
        try:
            async with asyncio.timeout(timeout):
                return await client.call_tool(tool, arguments)
        except TimeoutError:
            log.warning("mcp_call_timeout server=%s tool=%s timeout_s=%g", self.name, tool,
                        timeout)
            raise CallTimedOut(f"{self.name}.{tool} gave no answer within {timeout:g} s "
                               f"([[mcp.servers]] timeout_seconds)") from None
        except MCPError as exc:
            if exc.code != CONNECTION_CLOSED:
                raise RemoteToolError(f"{self.name}.{tool}: {exc.message}") from exc
            self._lost(exc.message)
        except Exception as exc:  # the transport failed under the call
            self._lost(_leaf_message(exc))
        raise ServerUnavailable(self.unavailable())

    def _lost(self, why: str) -> None:
        self.last_error = why
        self.connected = False
        self._broken.set()

    def row(self) -> dict[str, Any]:
        """The server for status: ``name``, ``transport``, ``connected``, ``since``, ``tools``
        (those offered to the model), ``missing`` (allowed but not listed), ``last_error``,
        ``restarts``."""
        offered = [t for t in self.config.allow if t in self.tools]
        missing = [t for t in self.config.allow if t not in self.tools] if self.tools else []
        since = (time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(self.since))
                 if self.since is not None else None)
        return {"name": self.name, "transport": self.config.transport,
                "connected": self.connected, "since": since,
                "tools": [f"{self.name}.{t}" for t in offered], "missing": missing,
                "last_error": self.last_error, "restarts": self.task.restarts}


async def probe(config: McpServerConfig) -> dict[str, RemoteToolInfo]:
    """Connect once, list the tools and close (``edge-cli doctor`` with no agent running);
    raises ServerUnavailable, saying why, when the server cannot be reached in time."""
    link = ServerLink(config)
    try:
        async with AsyncExitStack() as stack:
            async with asyncio.timeout(max(config.timeout_seconds, CONNECT_SECONDS)):
                client = await link._connect(stack)
                tools = await link._list(client)
    except Exception as exc:
        raise ServerUnavailable(_leaf_message(exc)) from exc
    return {t.name: RemoteToolInfo.of(t) for t in tools}
