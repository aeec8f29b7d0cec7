"""``edge-cli mcp``: an MCP server over stdio that is a client of the running agent.

It never opens a board: each tool call is one request on the agent's control socket, carrying
``"as": "mcp:<client>"`` (the client's ``clientInfo.name``), so the agent's policy sees the MCP
client as the caller and keeps the local user who ran the command as the audit trail's "why"
(:func:`edge.control.ops.mcp_requester`). What an admin's *Always* is remembered for is that
user's uid with the client's name: another local user whose client names itself the same is
asked again. ``ssh pi edge-cli mcp`` is then an MCP server for any client that can run a
command.
"""

from __future__ import annotations

import functools
import logging
from pathlib import Path
from typing import Any

import anyio

from edge.control.client import request
from edge.control.ops import OpResult
from edge.core.exc import DaemonUnavailable, EdgeError
from edge.mcp.server import McpCaller, StdioCaller, catalog_server

log = logging.getLogger(__name__)

READ_TIMEOUT_SECONDS = 30.0
"""An operation that answers from the agent (a read, a list, a fresh sensor measurement)."""
APPROVAL_MARGIN_SECONDS = 30.0
"""An actuation may wait for an admin's approval: up to ``approval_timeout_seconds``, plus this."""


class SocketDoor:
    """The running agent's control socket as the MCP server's door."""

    def __init__(self, paths: list[Path], approval_timeout: float):
        from edge.ops.catalog import waits_for_approval  # with the tools it serves

        self.paths = paths
        self.approval_timeout = approval_timeout
        self.waits = waits_for_approval()
        """What may wait for an admin's approval (the catalog's actuations and changes)."""

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


def check_agent(paths: list[Path]) -> str | None:
    """None when an agent answers on one of ``paths``; else why not (for stderr)."""
    try:
        request(paths, "status", {}, 5.0)
    except DaemonUnavailable:
        return ("no agent is running, and edge-cli mcp never opens the pins itself; start it "
                "with `edge-cli run` or `sudo systemctl start edge-agent`")
    except EdgeError as exc:
        return str(exc)
    return None


def serve(paths: list[Path], approval_timeout: float) -> None:
    """Speak MCP on stdin and stdout until the client closes them."""
    caller = StdioCaller()
    server = catalog_server(SocketDoor(paths, approval_timeout), caller, [caller.middleware])
    anyio.run(server.run_stdio_async)
