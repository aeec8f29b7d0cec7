"""Supervised channel listeners (seed 002_9a1873f4f488f98f.txt "監控重啟"): a listener that fails
is restarted with exponential backoff (capped), and its health says "down since …" meanwhile.
A listener that returns normally has reached the end of its input (the CLI at EOF): it ends."""

from __future__ import annotations

import asyncio
import logging
import time

from edge.channels.base import Channel, ChannelMessage

log = logging.getLogger(__name__)

BACKOFF_START_SECONDS = 1.0
BACKOFF_MAX_SECONDS = 60.0


class ListenerSupervisor:
    def __init__(self, channel: Channel, backoff_start: float = BACKOFF_START_SECONDS,
                 backoff_max: float = BACKOFF_MAX_SECONDS):
        self.channel = channel
        self.backoff_start = backoff_start
        self.backoff_max = backoff_max
        self.down_since: float | None = time.time()
        self.restarts = 0
        self.last_error: str | None = None

    async def run(self, bus: asyncio.Queue[ChannelMessage]) -> None:
        backoff = self.backoff_start
        while True:
            self.down_since = None
            started = time.monotonic()
            try:
                await self.channel.listen(bus)
                log.info("channel_ended channel=%s", self.channel.name)
                self.down_since = time.time()
                return
            except asyncio.CancelledError:
                self.down_since = time.time()
                raise
            except Exception as exc:
                self.down_since = time.time()
                self.last_error = f"{type(exc).__name__}: {exc}"
                if time.monotonic() - started > self.backoff_max:
                    backoff = self.backoff_start  # it ran fine for a while: start over
                log.error("channel_failed channel=%s error=%r restart_in=%.1fs",
                          self.channel.name, exc, backoff)
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, self.backoff_max)
            self.restarts += 1

    async def health(self) -> dict:
        healthy = self.down_since is None and await self.channel.health_check()
        down = None if self.down_since is None else time.strftime(
            "%Y-%m-%dT%H:%M:%S", time.localtime(self.down_since))
        return {"name": self.channel.name, "healthy": healthy, "down_since": down,
                "restarts": self.restarts, "last_error": self.last_error}
