"""Inbound debounce: texts from one sender arriving within
``window`` seconds merge into one turn, newline separated; commands and attachments are never
merged (they flush what is pending first, keeping order); ``max_wait`` bounds the delay."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import replace

from edge.channels.base import ChannelMessage

DEBOUNCE_SECONDS = 0.3
MAX_WAIT_SECONDS = 2.0

Flush = Callable[[list[ChannelMessage]], Awaitable[None]]


def merge(messages: list[ChannelMessage]) -> ChannelMessage:
    """One turn from several: contents joined by newlines, the last message's id and time."""
    last = messages[-1]
    return replace(last, content="\n".join(m.content for m in messages),
                   mentioned=any(m.mentioned for m in messages))


class InboundDebouncer:
    def __init__(self, flush: Flush, window: float = DEBOUNCE_SECONDS,
                 max_wait: float = MAX_WAIT_SECONDS):
        self._flush = flush
        self.window = window
        self.max_wait = max_wait
        self._pending: dict[str, list[ChannelMessage]] = {}
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._first: dict[str, float] = {}

    @staticmethod
    def key(msg: ChannelMessage) -> str:
        return msg.interruption_scope

    async def submit(self, msg: ChannelMessage, mergeable: bool) -> None:
        key = self.key(msg)
        if not mergeable or self.window <= 0:
            await self.flush(key)
            await self._flush([msg])
            return
        loop = asyncio.get_running_loop()
        self._pending.setdefault(key, []).append(msg)
        first = self._first.setdefault(key, loop.time())
        if timer := self._timers.pop(key, None):
            timer.cancel()
        delay = min(self.window, max(0.0, first + self.max_wait - loop.time()))
        self._timers[key] = loop.call_later(delay, lambda: asyncio.ensure_future(self.flush(key)))

    async def flush(self, key: str) -> None:
        if timer := self._timers.pop(key, None):
            timer.cancel()
        self._first.pop(key, None)
        messages = self._pending.pop(key, None)
        if messages:
            await self._flush(messages)

    async def flush_all(self) -> None:
        for key in list(self._pending):
            await self.flush(key)

    @property
    def pending(self) -> int:
        return sum(len(v) for v in self._pending.values())
