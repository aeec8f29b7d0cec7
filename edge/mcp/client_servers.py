"""Every ``[[mcp.servers]]`` of the agent: the links, their tools for the model, their state.

Built where the runtime is assembled (:meth:`edge.assembly.AgentAssembly.start_mcp_servers`)
with the approval gate and the hardware's recorders; :meth:`McpServers.start` starts each link's
supervised task and waits (at most :data:`START_WAIT_SECONDS`) for its first listing, so the
model is told the tools' real schemas; a server still down then is offered with an open schema,
and its tools say why they cannot run until it is back.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection
from typing import Any

from edge.config.mcp import McpServerConfig
from edge.core.supervision import SupervisedTask, close_all
from edge.mcp.client import PING_SECONDS, ServerLink
from edge.mcp.remote_tools import Record, RemoteGate, RemoteTool, remote_tools
from edge.mcp.sandbox import Places
from edge.security.approvals import ApprovalGate

START_WAIT_SECONDS = 10.0


class McpServers:
    def __init__(self, servers: list[McpServerConfig], approvals: ApprovalGate,
                 max_per_minute: int, record: Record, taken: Collection[str] = (), *,
                 places: Places | None = None, backoff_start: float | None = None,
                 backoff_max: float | None = None, ping_seconds: float = PING_SECONDS,
                 on_change: Callable[[], None] | None = None):
        """``taken``: the local tools' names, which no remote tool's may take; ``places``: the
        agent's own, hidden from sandboxed servers, and where their scratch directories go."""
        self.links = [ServerLink(s, places=places, backoff_start=backoff_start,
                                 backoff_max=backoff_max, ping_seconds=ping_seconds,
                                 on_change=on_change) for s in servers]
        self.gate = RemoteGate(approvals, max_per_minute, record)
        self.tools: list[RemoteTool] = remote_tools(self.links, self.gate, taken)

    async def start(self) -> None:
        for link in self.links:
            link.task.start()
        await asyncio.gather(*(self._first_listing(link) for link in self.links))

    async def _first_listing(self, link: ServerLink) -> None:
        try:
            async with asyncio.timeout(START_WAIT_SECONDS):
                await link.listed.wait()
        except TimeoutError:
            pass  # still starting: its tools say so until it is up

    def supervised_tasks(self) -> list[SupervisedTask]:
        return [link.task for link in self.links]

    def status(self) -> dict[str, Any]:
        """``{"servers": [...]}``, one row per server (:meth:`ServerLink.row`)."""
        return {"servers": [link.row() for link in self.links]}

    async def aclose(self) -> None:
        await close_all(self.supervised_tasks())
