"""Supervised channel listeners: a listener that fails
is restarted with exponential backoff (capped), and its health says "down since …" meanwhile.
A listener that returns normally has reached the end of its input (the CLI at EOF): it ends.

A channel may report itself ``stalled()`` (a poller that stopped polling without an error): the
supervisor checks every few seconds, cancels it and restarts it, so a dead poller is never
reported healthy (the peers' most reported bug)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from edge.channels.base import Channel, ChannelMessage

log = logging.getLogger(__name__)

STALL_CHECK_SECONDS = 5.0


class ListenerStalled(Exception):
    pass


class ListenerSupervisor:
    def __init__(self, channel: Channel, backoff_start: float | None = None,
                 backoff_max: float | None = None, stall_check: float | None = None,
                 on_change: Callable[[], None] | None = None):
        """Backoff bounds default to the channel's ``reconnect_backoff`` (start, max), if any."""
        start, cap = channel.reconnect_backoff
        self.channel = channel
        self.backoff_start = backoff_start if backoff_start is not None else start
        self.backoff_max = backoff_max if backoff_max is not None else cap
        self.stall_check = stall_check if stall_check is not None else STALL_CHECK_SECONDS
        self.on_change = on_change
        """Called when the listener goes up or down (the service's status line follows)."""
        self.down_since: float | None = None
        """When the listener went down (None while it runs, and before it first starts: the
        service's READY line lists channels as they are, not as down for the first moment)."""
        self.restarts = 0
        self.last_error: str | None = None
        self.input_ended = False
        """The listener returned on its own (a terminal's end of input): not a failure, and the
        channel still delivers the replies to what it read."""

    async def run(self, bus: asyncio.Queue[ChannelMessage]) -> None:
        backoff = self.backoff_start
        while True:
            self._set_down(None)
            started = time.monotonic()
            try:
                await self._listen_watched(bus)
                log.info("channel_ended channel=%s", self.channel.name)
                self.input_ended = True
                if self.on_change is not None:
                    self.on_change()
                return
            except asyncio.CancelledError:
                self.down_since = time.time()
                raise
            except Exception as exc:
                self._set_down(time.time())
                self.last_error = f"{type(exc).__name__}: {exc}"
                if time.monotonic() - started > self.backoff_max:
                    backoff = self.backoff_start  # it ran fine for a while: start over
                log.error("channel_failed channel=%s error=%r restart_in=%.1fs",
                          self.channel.name, exc, backoff)
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, self.backoff_max)
            self.restarts += 1

    def _set_down(self, since: float | None) -> None:
        changed = (since is None) != (self.down_since is None)
        self.down_since = since
        if changed and self.on_change is not None:
            self.on_change()

    async def _listen_watched(self, bus: asyncio.Queue[ChannelMessage]) -> None:
        listener = asyncio.create_task(self.channel.listen(bus))
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

    async def health(self) -> dict:
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
