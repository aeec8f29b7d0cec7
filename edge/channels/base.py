"""The Channel protocol and message types (seed 000_a48630eb162deda3.txt section 2; seed 002).

``listen`` pushes every inbound message onto one shared bus (an asyncio.Queue) instead of calling
back, so the runtime consumes from one place; ``send`` delivers a reply.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable


@dataclass(frozen=True)
class ChannelMessage:
    sender: str
    reply_target: str
    content: str
    channel: str
    id: str = field(default_factory=lambda: uuid.uuid4().hex)
    timestamp: float = field(default_factory=time.time)
    thread_id: str | None = None

    @property
    def caller(self) -> str:
        """Who asked, as logged by the policy: ``telegram:42``."""
        return f"{self.channel}:{self.sender}"

    @property
    def conversation_key(self) -> str:
        """History key (seed 000 3.2): ``{channel}_{sender}`` or ``{channel}_{thread}_{sender}``."""
        if self.thread_id:
            return f"{self.channel}_{self.thread_id}_{self.sender}"
        return f"{self.channel}_{self.sender}"


@dataclass(frozen=True)
class SendMessage:
    content: str
    recipient: str
    thread_id: str | None = None


@runtime_checkable
class Channel(Protocol):
    name: str

    async def listen(self, bus: asyncio.Queue[ChannelMessage]) -> None:
        """Push inbound messages onto ``bus``; return when the source ends, raise on failure."""

    async def send(self, message: SendMessage) -> None: ...

    async def health_check(self) -> bool: ...
