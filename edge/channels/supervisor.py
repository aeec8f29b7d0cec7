"""Supervised channel listeners: a :class:`~edge.core.supervision.SupervisedTask` around
``channel.listen``. A listener that fails is logged with its traceback and restarted with
exponential backoff (capped, from the channel's ``reconnect_backoff``), and its health says "down
since …" meanwhile. A listener that returns normally has reached the end of its input (the CLI at
EOF): it ends.

A channel may report itself ``stalled()`` (a poller that stopped polling without an error): the
supervisor checks every few seconds, cancels it and restarts it, so a dead poller is never
reported healthy (the peers' most reported bug)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from edge.channels.base import Channel, ChannelMessage
from edge.core.exc import EdgeError
from edge.core.supervision import SupervisedTask

STALL_CHECK_SECONDS = 5.0


class ListenerStalled(EdgeError):
    """The listener still runs but the channel says it no longer works (no successful poll)."""


class ListenerSupervisor(SupervisedTask):
    def __init__(self, channel: Channel, backoff_start: float | None = None,
                 backoff_max: float | None = None, stall_check: float | None = None,
                 on_change: Callable[[], None] | None = None):
        """Backoff bounds default to the channel's ``reconnect_backoff`` (start, max).
        ``on_change`` is called when the listener goes up or down, or its input ends (the
        service's status line follows)."""
        start, cap = channel.reconnect_backoff
        super().__init__(f"listen-{channel.name}", self._listen_watched,
                         backoff_start=start if backoff_start is None else backoff_start,
                         backoff_max=cap if backoff_max is None else backoff_max,
                         on_change=on_change)
        self.channel = channel
        self.stall_check = stall_check if stall_check is not None else STALL_CHECK_SECONDS
        self._bus: asyncio.Queue[ChannelMessage] | None = None

    async def run(self, bus: asyncio.Queue[ChannelMessage]) -> None:
        """Listen into ``bus`` (restarted after failures) until cancelled or the input ends."""
        self._bus = bus
        await self.supervise()

    @property
    def input_ended(self) -> bool:
        """The listener returned on its own (a terminal's end of input): not a failure, and the
        channel still delivers the replies to what it read."""
        return self.ended

    async def _listen_watched(self) -> None:
        assert self._bus is not None, "ListenerSupervisor.run(bus) names the bus"
        listener = asyncio.create_task(self.channel.listen(self._bus))
        try:
            while True:
                done, _ = await asyncio.wait({listener}, timeout=self.stall_check)
                if done:
                    return listener.result()
                if self.channel.stalled():
                    raise ListenerStalled("stalled: no successful poll for too long")
        finally:
            if not listener.done():
                listener.cancel()
                await asyncio.gather(listener, return_exceptions=True)

    @property
    def down(self) -> bool:
        """The listener failed, or the channel reports failures while it listens."""
        return self.down_since is not None or self.channel.failing_since is not None

    @property
    def reason(self) -> str | None:
        """The freshest known cause: the channel's own while it is failing, else the listener's
        last failure."""
        failing = self.channel.failing_since is not None
        return (self.channel.last_error if failing else None) or self.last_error

    async def health(self) -> dict[str, Any]:
        """Healthy only when listening and the channel agrees; a channel that is listening but
        unwell (a stalled poller) is down since its ``last_ok`` time, when it has one."""
        healthy = not self.down and await self.channel.health_check()
        since: float | None = None
        if not healthy:  # the first failure, not a later restart
            known = [t for t in (self.down_since, self.channel.failing_since) if t is not None]
            since = min(known) if known else (self.channel.last_ok or time.time())
        down = None if healthy else time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(since))
        return {"name": self.channel.name, "healthy": healthy, "down_since": down,
                "input_ended": self.input_ended, "restarts": self.restarts,
                "last_error": self.reason}
