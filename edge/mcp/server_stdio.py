"""``edge-cli mcp``: an MCP server over stdio that is a client of the running agent.

It never opens a board: each tool call is one request on the agent's control socket, carrying
``"as": "mcp:<client>"`` (the client's ``clientInfo.name``), so the agent's policy sees the MCP
client as the caller and keeps the local user who ran the command as the audit trail's "why"
(:func:`edge.control.ops.mcp_requester`). What an admin's *Always* is remembered for is that
user's uid with the client's name: another local user whose client names itself the same is
asked again. ``ssh pi edge-cli mcp`` is then an MCP server for any client that can run a
command.

Start-up is the SDK's import and little else (``make bench``: ``bench mcp``): ``initialize`` is
answered before the catalog of operations is loaded; its tools are registered when the first
request after it arrives (:class:`ToolsOnFirstUse`), and the agent is asked whether it runs while
the SDK loads (:mod:`edge.cli.mcp_cmd`).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext

from edge.control.client import request
from edge.control.ops import OpResult
from edge.core.exc import EdgeError
from edge.mcp.server import McpCaller, StdioCaller, add_tools, catalog_server

log = logging.getLogger(__name__)

READ_TIMEOUT_SECONDS = 30.0
"""An operation that answers from the agent (a read, a list, a fresh sensor measurement)."""
APPROVAL_MARGIN_SECONDS = 30.0
"""An actuation may wait for an admin's approval: up to ``approval_timeout_seconds``, plus this."""


class SocketDoor:
    """The running agent's control socket as the MCP server's door."""

    def __init__(self, paths: list[Path], approval_timeout: float):
        self.paths = paths
        self.approval_timeout = approval_timeout

    @functools.cached_property
    def waits(self) -> frozenset[str]:
        """What may wait for an admin's approval (the catalog's actuations and changes), asked
        at the first call: the catalog loads with the tools it serves."""
        from edge.ops.catalog import waits_for_approval

        return waits_for_approval()

    def timeout(self, op: str) -> float:
        if op in self.waits:
            return self.approval_timeout + APPROVAL_MARGIN_SECONDS
        return READ_TIMEOUT_SECONDS

    async def __call__(self, op: str, args: dict[str, Any], caller: McpCaller) -> OpResult:
        try:  # the agent names the caller by this process's uid with the client's name
            answer = await anyio.to_thread.run_sync(
                functools.partial(request, self.paths, op, args, self.timeout(op),
                                  caller=caller.name))
        except EdgeError as exc:  # the agent went away, or hangs: the call fails, saying so
            return OpResult(False, f"{exc}; start the agent (`edge-cli run` or `sudo systemctl "
                            "start edge-agent`) and call again")
        return OpResult.from_dict(answer)


HANDSHAKE = frozenset({"initialize", "server/discover", "ping"})
"""What a client asks before it uses the server: ``initialize`` (and ``server/discover`` from
2026-07-28 on), answered without the tools."""


class ToolsOnFirstUse:
    """Server middleware that registers the catalog's tools when the first request after the
    handshake arrives (``tools/list``, as a rule): the answer to ``initialize`` does not wait for
    the catalog's operations and their argument models, and the client's round trip to its next
    request is spent on them instead."""

    def __init__(self, register: Callable[[], None]):
        self._register: Callable[[], None] | None = register

    async def middleware(self, ctx: ServerRequestContext[Any, Any],
                         call_next: CallNext) -> HandlerResult:
        if self._register is not None and ctx.method not in HANDSHAKE:
            register, self._register = self._register, None
            register()
        return await call_next(ctx)


def serve(paths: list[Path], approval_timeout: float) -> None:
    """Speak MCP on stdin and stdout until the client closes them."""
    caller = StdioCaller()
    door = SocketDoor(paths, approval_timeout)
    tools = ToolsOnFirstUse(lambda: add_tools(server, door, caller))
    server = catalog_server(door, caller, [caller.middleware, tools.middleware], tools=False)
    anyio.run(server.run_stdio_async)
