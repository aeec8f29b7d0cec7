"""``[web] listen``: the agent serves its web page (:mod:`edge.web.app`) as a supervised task
(``web`` in ``edge-cli status``), with uvicorn under the same connection bounds and refusal
summary as the MCP HTTP server (:mod:`edge.mcp.server_connections`), and the same ``Host`` and
``Origin`` rule (:mod:`edge.mcp.server_hosts`); the MCP SDK is never imported (32-bit Pi OS has
none). Refusals are logged as one line per interval: ``web_refused count=... reasons=...``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import socket
from collections.abc import Iterator
from typing import TYPE_CHECKING

import uvicorn

from edge.mcp.server_connections import ConnectionGuard, RefusalLog
from edge.mcp.server_hosts import HostRule
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

SHUTDOWN_SECONDS = 2


class _AgentsUvicorn(uvicorn.Server):
    """uvicorn inside the agent: the agent owns the signals (it stops the server itself)."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


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

    def _bind(self) -> socket.socket:
        host, port = self.config.host, self.config.port
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        return socket.create_server((host, port), family=family)

    async def serve(self) -> None:
        """Serve until cancelled (the agent stopping); a failure to bind or start raises."""
        sock = self._bind()
        app = self.app()
        config = uvicorn.Config(app, log_config=None, access_log=False, lifespan="off",
                                timeout_graceful_shutdown=SHUTDOWN_SECONDS,
                                http=self.connections.protocol(), ws="none",
                                timeout_keep_alive=math.ceil(self.config.idle_timeout_seconds),
                                backlog=self.config.max_connections, proxy_headers=False)
        server = _AgentsUvicorn(config)
        log.info("web_listening url=http://%s/ sessions=%d", self.config.listen,
                 len(self.sessions.sessions()))
        serving = asyncio.ensure_future(server.serve(sockets=[sock]))
        try:
            await asyncio.shield(serving)
        except asyncio.CancelledError:
            server.should_exit = True
            if self.streams is not None:
                self.streams.close_all()
                self.streams = None
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(serving, SHUTDOWN_SECONDS * 2)
            raise
        except SystemExit:
            raise RuntimeError("the web server did not start (see the log)") from None
        finally:
            sock.close()
            self.refusals.flush()
        raise RuntimeError("the web server stopped")
