"""Links to other MCP servers (``[[mcp.servers]]``), through the official SDK's client.

One :class:`ServerLink` per server: a stdio server is started as a subprocess (``command``,
``args``, ``env``) in its sandbox (:mod:`edge.mcp.sandbox`) over bounded pipes
(:mod:`edge.mcp.client_stdio`), a streamable HTTP server is reached at its ``url`` with
``headers``, its answers bounded too (:mod:`edge.mcp.client_http`). Each link runs in a
:class:`~edge.core.supervision.SupervisedTask` (``mcp-client-<name>``): it connects, lists the
server's tools within its caps (:mod:`edge.mcp.client_bounds`), then holds the session, pinging
it now and then; a server that cannot start, stops answering or dies ends the task, which starts
it again after a backoff (1 s doubling to 60 s). Meanwhile its tools answer with an error that
says so, and status shows the link down.

Any answer to a ping shows the server alive: SDK 2.x servers on the 2026 protocol have no
``ping`` and answer "Method not found", which is an answer too.

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
from typing import Any

from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED, METHOD_NOT_FOUND, CallToolResult, Implementation, Tool

from edge import __version__
from edge.config.mcp import McpServerConfig
from edge.core.exc import EdgeError
from edge.core.supervision import SupervisedTask
from edge.mcp.client_bounds import Listing, RemoteToolInfo, admit
from edge.mcp.client_http import bounded_http_client
from edge.mcp.client_stdio import bounded_stdio
from edge.mcp.sandbox import Places, SandboxUnavailable, default_places, launch

log = logging.getLogger(__name__)

PING_SECONDS = 30.0
"""How often an idle session is pinged (a server that died between calls is found by then)."""
CONNECT_SECONDS = 15.0
"""At least this long for a server to start and list its tools (a call's ``timeout_seconds``
may be shorter than a process takes to start)."""
MAX_LIST_PAGES = 50

__all__ = ["CallTimedOut", "RemoteToolError", "RemoteToolInfo", "SandboxUnavailable",
           "ServerLink", "ServerLost", "ServerUnavailable", "probe"]


class RemoteToolError(EdgeError):
    """A remote tool could not be called, or its server answered with an error."""


class ServerUnavailable(RemoteToolError):
    """The server is not connected now (starting, or restarting after a failure)."""


class CallTimedOut(RemoteToolError):
    """The server gave no answer within its ``timeout_seconds``."""


class ServerLost(EdgeError):
    """The session ended (the process died, the connection closed): the link is restarted."""


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

    def __init__(self, config: McpServerConfig, *, places: Places | None = None,
                 backoff_start: float | None = None, backoff_max: float | None = None,
                 ping_seconds: float = PING_SECONDS,
                 on_change: Callable[[], None] | None = None):
        self.config = config
        self.name = config.name
        self.places = places or default_places()
        self.ping_seconds = ping_seconds
        self.tools: dict[str, RemoteToolInfo] = {}
        """The server's tools as last listed (kept while it is down, for their schemas)."""
        self.left_out: dict[str, str] = {}
        """Allowed tools left out by the caps, and why."""
        self.warnings: list[str] = []
        self.sandbox = "none" if config.url is not None else "on" if config.sandbox else "off"
        """``on`` (a stdio server in its sandbox), ``off`` (``sandbox = false``), ``refused``
        (no sandbox here: not started) or ``none`` (an HTTP server)."""
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
                    listing = await self._list(client)
                self._listed(listing)
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
            http = bounded_http_client({k: v.get_secret_value() for k, v in cfg.headers.items()},
                                       self.name, cfg.max_message_bytes)
            await stack.enter_async_context(http)
            client = Client(streamable_http_client(cfg.url, http_client=http,
                                                   max_sse_event_size=2 * cfg.max_message_bytes),
                            client_info=info)
        else:
            try:
                start = await asyncio.to_thread(launch, cfg, self.places)
            except SandboxUnavailable:
                self.sandbox = "refused"
                raise
            client = Client(bounded_stdio(start, self.name, cfg.max_message_bytes),
                            client_info=info)
        return await stack.enter_async_context(client)

    async def _list(self, client: Client) -> Listing:
        tools: list[Tool] = []
        cursor: str | None = None
        for _ in range(MAX_LIST_PAGES):
            page = await client.list_tools(cursor=cursor)
            tools += page.tools
            cursor = page.next_cursor
            if not cursor or len(tools) > self.config.max_tools:
                break
        return admit(tools, self.config, more=bool(cursor))

    def _listed(self, listing: Listing) -> None:
        self.tools, self.left_out, self.warnings = listing.tools, listing.left_out, \
            listing.warnings
        for warning in listing.warnings:
            log.warning("mcp_tools_capped server=%s reason=%r", self.name, warning)

    async def _hold(self, client: Client) -> None:
        """Until the session breaks: a failed call says so, a ping finds it between calls."""
        while True:
            try:
                await asyncio.wait_for(self._broken.wait(), self.ping_seconds)
            except TimeoutError:
                await self._ping(client)
                continue
            raise ServerLost(self.last_error or "the connection closed")

    async def _ping(self, client: Client) -> None:
        """Any answer is a live server: "Method not found" too (no ping on the 2026 protocol)."""
        try:
            async with asyncio.timeout(self.config.timeout_seconds):
                await client.session.send_ping()
        except MCPError as exc:
            if exc.code != METHOD_NOT_FOUND:
                raise

    def _up(self, client: Client) -> None:
        self._client = client
        self.connected = True
        self.since = time.time()
        self.listed.set()
        missing = self._missing()
        log.info("mcp_connected server=%s transport=%s sandbox=%s tools=%d allowed=%d "
                 "missing=%s left_out=%s", self.name, self.config.transport, self.sandbox,
                 len(self.tools), len(self.config.allow), ",".join(missing) or "none",
                 ",".join(self.left_out) or "none")

    def _missing(self) -> list[str]:
        """Allowed tools the server does not list (a typo in allow offers the model nothing)."""
        return [t for t in self.config.allow if t not in self.tools and t not in self.left_out]

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
        """The server for status: ``name``, ``transport``, ``sandbox`` (:attr:`sandbox`),
        ``connected``, ``since``, ``tools`` (those offered to the model), ``missing`` (allowed
        but not listed), ``warnings`` (its caps), ``last_error``, ``restarts``."""
        offered = [t for t in self.config.allow if t in self.tools]
        missing = self._missing() if self.tools else []
        since = (time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(self.since))
                 if self.since is not None else None)
        return {"name": self.name, "transport": self.config.transport,
                "sandbox": self.sandbox, "connected": self.connected, "since": since,
                "tools": [f"{self.name}.{t}" for t in offered], "missing": missing,
                "warnings": list(self.warnings), "last_error": self.last_error,
                "restarts": self.task.restarts}


async def probe(config: McpServerConfig, places: Places | None = None) -> ServerLink:
    """Connect once, list the tools and close (``edge-cli doctor`` with no agent running): the
    link as listed (its tools, sandbox and warnings); raises ServerUnavailable, saying why, when
    the server cannot be reached in time."""
    link = ServerLink(config, places=places)
    try:
        async with AsyncExitStack() as stack:
            async with asyncio.timeout(max(config.timeout_seconds, CONNECT_SECONDS)):
                client = await link._connect(stack)
                link._listed(await link._list(client))
    except Exception as exc:
        raise ServerUnavailable(_leaf_message(exc)) from exc
    return link
