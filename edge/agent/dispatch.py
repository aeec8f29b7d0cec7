"""The dispatcher (seed 000_a48630eb162deda3.txt 2.3, seed 002 "信號量限流的 worker pool"):
every channel pushes onto one bounded bus; a semaphore-bounded pool of tasks handles messages,
in arrival order per conversation and in parallel across conversations."""

from __future__ import annotations

import asyncio
import logging
from collections import defaultdict
from collections.abc import Awaitable, Callable

from edge.channels.base import Channel, ChannelMessage, SendMessage

log = logging.getLogger(__name__)

BUS_CAPACITY = 100
PARALLELISM_PER_CHANNEL = 4
MIN_IN_FLIGHT, MAX_IN_FLIGHT = 8, 64


def max_in_flight(channel_count: int) -> int:
    return max(MIN_IN_FLIGHT, min(MAX_IN_FLIGHT, channel_count * PARALLELISM_PER_CHANNEL))


class Dispatcher:
    def __init__(self, handle: Callable[[ChannelMessage], Awaitable[str]],
                 channels: dict[str, Channel]):
        self.handle = handle
        self.channels = channels
        self.bus: asyncio.Queue[ChannelMessage] = asyncio.Queue(maxsize=BUS_CAPACITY)
        self._slots = asyncio.Semaphore(max_in_flight(len(channels)))
        self._order: dict[str, asyncio.Lock] = defaultdict(asyncio.Lock)
        self._tasks: set[asyncio.Task] = set()

    async def run(self) -> None:
        """Consume the bus until cancelled; cancelling also cancels the turns in flight."""
        try:
            while True:
                msg = await self.bus.get()
                await self._slots.acquire()
                task = asyncio.create_task(self._process(msg), name=f"turn-{msg.id}")
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
        finally:
            for task in list(self._tasks):
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _process(self, msg: ChannelMessage) -> None:
        try:
            async with self._order[msg.conversation_key]:
                try:
                    reply = await self.handle(msg)
                except Exception as exc:  # one bad turn must not take the agent down
                    log.exception("turn_failed by=%s", msg.caller)
                    reply = f"Sorry, that failed inside the agent ({type(exc).__name__}); see the logs."
                if reply:
                    await self.channels[msg.channel].send(
                        SendMessage(reply, msg.reply_target, msg.thread_id))
        except Exception:
            log.exception("reply_failed channel=%s to=%s", msg.channel, msg.reply_target)
        finally:
            self._slots.release()
            self.bus.task_done()

    async def drain(self) -> None:
        """Wait until every queued message has been handled and answered."""
        await self.bus.join()
