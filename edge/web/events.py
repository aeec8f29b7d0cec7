"""The page's live stream: server-sent events (``GET /api/events``), one per open page, bounded
(``[web] max_streams``: one more is answered 503). Every output change and board report reaches
each open page as it happens (``event: pin``, its board, pin, kind and value, made logical by
the hardware) and every approval that starts or stops waiting
(``event: approval``), pushed from the hardware's subscription (:meth:`edge.hardware.Hardware.subscribe`),
never polled; the page then asks ``pins`` again through the catalog. A comment every
``KEEPALIVE_SECONDS`` keeps proxies from closing an idle stream, and ends it once its session has
been revoked.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from typing import TYPE_CHECKING, Any

from edge.web.gate import Refusal, refused

if TYPE_CHECKING:
    from starlette.types import Receive, Send

    from edge.hardware import Hardware
    from edge.security.approvals import ApprovalGate
    from edge.security.web_sessions import WebSession, WebSessions
    from peripherals.base import BoardEvent

log = logging.getLogger(__name__)

KEEPALIVE_SECONDS = 15.0
QUEUED = 64
"""Events waiting for one slow page; beyond them, it is told to read everything again."""


class EventStreams:
    def __init__(self, hardware: Hardware, sessions: WebSessions, max_streams: int,
                 approvals: ApprovalGate):
        self.hardware = hardware
        self.approvals = approvals
        approvals.watchers.append(self._approvals_changed)
        self.sessions = sessions
        self.max_streams = max_streams
        self._queues: dict[asyncio.Queue[dict[str, Any] | None], str] = {}
        """Each open page's queue, and its session's name."""
        self._unsubscribe = hardware.subscribe(self._event)

    @property
    def open(self) -> int:
        return len(self._queues)

    def _event(self, event: BoardEvent) -> None:
        data = {"board": event.board, "kind": event.kind, "pin": event.pin, "value": event.value}
        for queue in list(self._queues):
            if queue.full():
                with contextlib.suppress(asyncio.QueueEmpty):
                    queue.get_nowait()
                data = {**data, "lost": True}
            queue.put_nowait(data)

    def _approvals_changed(self) -> None:
        for queue in list(self._queues):
            with contextlib.suppress(asyncio.QueueFull):
                queue.put_nowait({"approvals": len(self.approvals.waiting())})

    def deliver(self, session: str, text: str) -> None:
        """A chat answer or receipt to ``session``'s open pages."""
        for queue, owner in list(self._queues.items()):
            if owner == session:
                with contextlib.suppress(asyncio.QueueFull):
                    queue.put_nowait({"chat": text})

    def close_all(self) -> None:
        self._unsubscribe()
        if self._approvals_changed in self.approvals.watchers:
            self.approvals.watchers.remove(self._approvals_changed)
        for queue in list(self._queues):
            with contextlib.suppress(asyncio.QueueFull):
                queue.put_nowait(None)

    async def serve(self, session: WebSession, send: Send, receive: Receive) -> Refusal | None:
        if len(self._queues) >= self.max_streams:
            return refused("streams", 503, "too many pages are open: close one ([web] max_streams)")
        queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue(QUEUED)
        self._queues[queue] = session.name
        gone = asyncio.ensure_future(_disconnected(receive))
        try:
            await send({"type": "http.response.start", "status": 200, "headers": [
                (b"content-type", b"text/event-stream"), (b"cache-control", b"no-store"),
                (b"x-content-type-options", b"nosniff")]})
            await send({"type": "http.response.body", "body": b"event: hello\ndata: {}\n\n",
                        "more_body": True})
            while not gone.done():
                getting = asyncio.ensure_future(queue.get())
                await asyncio.wait({getting, gone}, timeout=KEEPALIVE_SECONDS,
                                   return_when=asyncio.FIRST_COMPLETED)
                if not getting.done():
                    getting.cancel()
                    if gone.done() or self.sessions.session_of_name(session.name) is None:
                        break
                    await send({"type": "http.response.body", "body": b": alive\n\n", "more_body": True})
                    continue
                data = getting.result()
                if data is None:
                    break
                kind = "approval" if "approvals" in data else "chat" if "chat" in data else "pin"
                await send({"type": "http.response.body", "more_body": True,
                            "body": f"event: {kind}\ndata: {json.dumps(data)}\n\n".encode()})
            with contextlib.suppress(OSError):
                await send({"type": "http.response.body", "body": b""})
        finally:
            self._queues.pop(queue, None)
            gone.cancel()
        return None


async def _disconnected(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
