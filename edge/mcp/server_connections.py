"""The MCP HTTP server's connections, bounded before any HTTP reaches the application: how many
are open (``[mcp] max_connections``, ``max_connections_per_peer``), how long one may take to send
a request head (``header_timeout_seconds``) and wait silent for its next one
(``idle_timeout_seconds``, uvicorn's keep-alive timeout); and what is refused, logged as one
summary line per interval (:class:`RefusalLog`), never a line or a traceback per connection.

uvicorn alone leaves a connection unbounded until its first request: ``limit_concurrency`` is
checked once a request's head has arrived (a half-open connection never gets there, and holds a
file descriptor meanwhile) and the keep-alive timer runs only after a response.
:class:`GuardedH11` is uvicorn's h11 protocol with those bounds added where a connection opens,
receives bytes and finishes a response; parsing HTTP, and everything after it, stay uvicorn's.

A connection is *waiting* while none of its requests is being answered (from connecting until its
head is complete, and between kept-alive requests) and *busy* while one is (an open event stream
too). A newcomer beyond a bound closes the longest-waiting connection of its own address (beyond
``max_connections_per_peer``) or of any address (beyond ``max_connections``); a busy connection
is never closed for a newcomer, so when every one that could make room is busy, the newcomer is
closed at once. One stranger's flood of half-open connections therefore churns only among its
own share, each gone within ``header_timeout_seconds``, and the agent's descriptors are never
exhausted (its control socket, its timers and an authenticated client keep working).
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections import Counter, OrderedDict
from typing import TYPE_CHECKING, Any, ClassVar

from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.protocols.utils import get_remote_addr

if TYPE_CHECKING:
    from edge.config.mcp import McpConfig
    from edge.config.web import WebConfig

log = logging.getLogger(__name__)

REFUSAL_LOG_SECONDS = 10.0
"""At most one ``mcp_http_refused`` line per this many seconds (a first refusal at once)."""
PEERS_SHOWN = 3
PEERS_COUNTED = 64
"""Distinct addresses named per interval; more are counted together (the log stays bounded)."""


class RefusalLog:
    """What the MCP HTTP server refused, by reason, logged as one line per interval::

        mcp_http_refused count=1200 reasons=head_timeout:1136,no_bearer:64 peers=192.168.1.66

    Reasons: ``busy`` (a newcomer closed at once), ``displaced`` (a waiting connection closed
    for a newcomer), ``head_timeout``, ``bad_request`` (not HTTP uvicorn accepts), ``host``,
    ``origin``, ``no_bearer`` and ``wrong_bearer`` (a bearer token missing, or none of
    ``[mcp.tokens]``; not ``..._token``, whose count the log's redaction of ``token:...`` would
    mask).

    >>> refusals = RefusalLog()
    >>> refusals.totals  # since the server started, by reason
    Counter()
    """

    def __init__(self, interval: float | None = None, event: str = "mcp_http_refused"):
        self.event = event
        """The log line's event name (the web page's server logs ``web_refused``)."""
        self.interval = REFUSAL_LOG_SECONDS if interval is None else interval
        self.totals: Counter[str] = Counter()
        self.lines = 0
        """Summary lines logged so far."""
        self._counts: Counter[str] = Counter()
        self._peers: Counter[str] = Counter()
        self._last = -math.inf
        self._timer: asyncio.TimerHandle | None = None

    def refuse(self, reason: str, peer: str) -> None:
        """Count one refusal; logged now if no line was in the last interval, else with the
        next line."""
        self.totals[reason] += 1
        self._counts[reason] += 1
        if peer in self._peers or len(self._peers) < PEERS_COUNTED:
            self._peers[peer] += 1
        if self._timer is not None:
            return
        wait = self._last + self.interval - time.monotonic()
        if wait <= 0:
            self.flush()
        else:
            self._timer = asyncio.get_running_loop().call_later(wait, self.flush)

    def flush(self) -> None:
        """Log what was counted since the last line (nothing when nothing was)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self._counts:
            return
        shown = [peer for peer, _ in self._peers.most_common(PEERS_SHOWN)]
        more = len(self._peers) - len(shown)
        log.warning("%s count=%d reasons=%s peers=%s%s", self.event, self._counts.total(),
                    ",".join(f"{reason}:{n}" for reason, n in self._counts.most_common()),
                    ",".join(shown), f",+{more}" if more else "")
        self.lines += 1
        self._last = time.monotonic()
        self._counts.clear()
        self._peers.clear()


class ConnectionGuard:
    """The bounds over every connection of one server; uvicorn builds its connections from
    :meth:`protocol`."""

    def __init__(self, config: McpConfig | WebConfig, refusals: RefusalLog):
        self.max_open = config.max_connections
        self.per_peer = config.max_connections_per_peer
        self.header_timeout = config.header_timeout_seconds
        self.refusals = refusals
        self.most_open = 0
        """The most connections open at once so far."""
        self.most_per_peer = 0
        """The most open at once from one address so far."""
        self._open: set[GuardedH11] = set()
        self._peers: Counter[str] = Counter()
        self._waiting: OrderedDict[GuardedH11, None] = OrderedDict()
        """Open connections no request of which is being answered, longest-waiting first."""

    @property
    def open(self) -> int:
        return len(self._open)

    def protocol(self) -> type[GuardedH11]:
        """uvicorn's ``http`` protocol class for this guard's connections."""
        guard = self

        class Guarded(GuardedH11):
            pass

        Guarded.guard = guard
        return Guarded

    def admit(self, conn: GuardedH11) -> bool:
        """Make room for ``conn`` (closing a waiting connection if a bound is reached); False
        when no room can be made."""
        if self._peers[conn.peer] >= self.per_peer:
            full, victim = True, self._longest_waiting(conn.peer)
        elif len(self._open) >= self.max_open:
            full, victim = True, self._longest_waiting(None)
        else:
            full, victim = False, None
        if full:
            if victim is None:
                self.refusals.refuse("busy", conn.peer)
                return False
            victim.close("displaced")
        self._open.add(conn)
        self._peers[conn.peer] += 1
        self._waiting[conn] = None
        self.most_open = max(self.most_open, len(self._open))
        self.most_per_peer = max(self.most_per_peer, self._peers[conn.peer])
        return True

    def waiting(self, conn: GuardedH11) -> None:
        if conn in self._open and conn not in self._waiting:
            self._waiting[conn] = None

    def busy(self, conn: GuardedH11) -> None:
        self._waiting.pop(conn, None)

    def closed(self, conn: GuardedH11) -> None:
        """Forget ``conn`` (at once when it is closed here, so that its room is free now)."""
        if conn in self._open:
            self._open.discard(conn)
            self._peers[conn.peer] -= 1
            if not self._peers[conn.peer]:
                del self._peers[conn.peer]
        self._waiting.pop(conn, None)

    def _longest_waiting(self, peer: str | None) -> GuardedH11 | None:
        return next((c for c in self._waiting if peer is None or c.peer == peer), None)


class PeerWarnings(logging.Logger):
    """uvicorn's logger for a connection: its warnings are about what a peer sent (a request it
    cannot parse, counted as a refusal when it is answered 400; an upgrade it does not speak,
    whose request goes on as plain HTTP) and are not logged one by one; its errors (an exception
    in the application) go to uvicorn's own log as ever."""

    def __init__(self) -> None:
        super().__init__("uvicorn.error", logging.INFO)  # not uvicorn's per-connection trace
        self.parent = logging.getLogger("uvicorn.error")

    def warning(self, msg: object, *args: object, **kwargs: Any) -> None:
        return None


PEER_WARNINGS = PeerWarnings()


class GuardedH11(H11Protocol):
    """uvicorn's h11 protocol within a :class:`ConnectionGuard`'s bounds."""

    guard: ClassVar[ConnectionGuard]

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.logger = PEER_WARNINGS
        self.peer = "?"
        self._admitted = False
        self._head_deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        address = get_remote_addr(transport)
        self.peer = address[0] if address else "?"
        if not self.guard.admit(self):
            transport.abort()  # before uvicorn knows of it: the descriptor goes now
            return
        self._admitted = True
        super().connection_made(transport)
        self._await_head()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._follow(received=True)

    def on_response_complete(self) -> None:
        super().on_response_complete()  # arms the keep-alive (idle) timer
        self._follow(received=False)

    def send_400_response(self, msg: str) -> None:
        self.guard.refusals.refuse("bad_request", self.peer)
        super().send_400_response(msg)

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_waiting_for_head()
        self.guard.closed(self)
        if self._admitted:
            super().connection_lost(exc)

    def close(self, reason: str) -> None:
        """Close the connection, counting it as refused for ``reason``."""
        self.guard.refusals.refuse(reason, self.peer)
        self._stop_waiting_for_head()
        self.guard.closed(self)
        self.transport.close()

    def _answering(self) -> bool:
        return self.cycle is not None and not self.cycle.response_complete

    def _follow(self, received: bool) -> None:
        """After bytes arrived or a response ended: busy while a request is being answered;
        else waiting, and once bytes of a next request (or of a body nobody reads) came, within
        the head deadline (before them, uvicorn's keep-alive timer runs)."""
        if self.transport.is_closing():
            return
        if self._answering():
            self._stop_waiting_for_head()
            self.guard.busy(self)
            return
        self.guard.waiting(self)
        if received or self.conn.trailing_data[0]:
            self._await_head()

    def _await_head(self) -> None:
        if self._head_deadline is None:
            self._head_deadline = self.loop.call_later(self.guard.header_timeout, self._head_late)

    def _stop_waiting_for_head(self) -> None:
        if self._head_deadline is not None:
            self._head_deadline.cancel()
            self._head_deadline = None

    def _head_late(self) -> None:
        self._head_deadline = None
        if not self.transport.is_closing() and not self._answering():
            self.close("head_timeout")
