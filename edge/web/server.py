"""``[web] listen``: the agent serves its web page (:mod:`edge.web.app`) as a supervised task
(``web`` in ``edge-cli status``), with uvicorn under the same connection bounds and refusal
summary as the MCP HTTP server (:mod:`edge.mcp.server_connections`), and the same ``Host`` and
``Origin`` rule (:mod:`edge.mcp.server_hosts`); the MCP SDK is never imported (32-bit Pi OS has
none). Refusals are logged as one line per interval: ``web_refused count=... reasons=...``.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from edge.mcp.server_connections import ConnectionGuard, RefusalLog
from edge.mcp.server_hosts import HostRule
from edge.mcp.server_uvicorn import bind, serve
from edge.security.web_sessions import WebSessions
from edge.web.app import WebApp
from edge.web.events import EventStreams
from edge.web.gate import WebGate

if TYPE_CHECKING:
    from pathlib import Path

    from edge.config.web import WebConfig
    from edge.hardware import Hardware
    from edge.ops.result import OpTarget
    from edge.security.approvals import ApprovalGate

log = logging.getLogger(__name__)


class WebChat:
    """The page's chat for :class:`edge.channels.web.WebChatChannel`: prompts in, answers out to
    the asker's open pages."""

    def __init__(self, server: WebServer):
        self.server = server
        self.inbox: asyncio.Queue[tuple[str, str]] = asyncio.Queue(64)

    def deliver(self, session: str, text: str) -> None:
        if self.server.streams is not None:
            self.server.streams.deliver(session, text)


class WebServer:
    def __init__(self, config: WebConfig, target: OpTarget, hardware: Hardware, state_dir: Path,
                 approvals: ApprovalGate):
        self.config = config
        self.approvals = approvals
        self.target = target
        self.hardware = hardware
        self.sessions = WebSessions.in_state_dir(state_dir, config.max_sessions, config.session_days)
        self.refusals = RefusalLog(event="web_refused")
        self.connections = ConnectionGuard(config, self.refusals)
        self.gate = WebGate(HostRule(config, local_pages=False), self.sessions, config.pair_attempts_per_minute)
        self.streams: EventStreams | None = None
        self.chat = WebChat(self)

    def app(self) -> WebApp:
        if self.streams is None:
            self.streams = EventStreams(self.hardware, self.sessions, self.config.max_streams,
                                        self.approvals)
        return WebApp(self.target, self.gate, self.streams, self.refusals, self.approvals,
                      self.chat.inbox if self.config.chat else None, self.config.secure_cookie)

    async def serve(self) -> None:
        """Serve until cancelled (the agent stopping); a failure to bind or start raises."""
        app = self.app()
        sock = bind(self.config)
        log.info("web_listening url=http://%s/ sessions=%d", self.config.listen,
                 len(self.sessions.sessions()))
        await serve(sock, app, idle_timeout=self.config.idle_timeout_seconds,
                    max_connections=self.config.max_connections, connections=self.connections,
                    refusals=self.refusals, lifespan="off", what="web server",
                    on_stop=self._close_streams)

    def _close_streams(self) -> None:
        if self.streams is not None:
            self.streams.close_all()
            self.streams = None
