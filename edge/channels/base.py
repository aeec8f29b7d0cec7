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
    is_group: bool = False
    mentioned: bool = False
    """In a group: the bot was mentioned (or replied to)."""
    attachments: tuple[str, ...] = ()

    @property
    def caller(self) -> str:
        """Who asked, as logged by the policy: ``telegram:42``."""
        return f"{self.channel}:{self.sender}"

    @property
    def conversation_key(self) -> str:
        """History key (seed 004): ``{channel}_{reply_target}_{sender}``, thread before sender."""
        thread = f"_{self.thread_id}" if self.thread_id else ""
        return f"{self.channel}_{self.reply_target}{thread}_{self.sender}"

    @property
    def interruption_scope(self) -> str:
        """Channel + reply target + sender + thread: a newer message cancels only within it."""
        return f"{self.channel}\0{self.reply_target}\0{self.sender}\0{self.thread_id or ''}"

    @property
    def session_key(self) -> str:
        """Session key (seed 001): ``agent:main:<channel>:<kind>:<peer>[:thread:<id>]``; in groups
        the peer is chat and sender, keeping history per sender as seed 004 does."""
        kind, peer = ("group", f"{self.reply_target}:{self.sender}") if self.is_group \
            else ("direct", self.sender)
        thread = f":thread:{self.thread_id}" if self.thread_id else ""
        return f"agent:main:{self.channel}:{kind}:{peer}{thread}"


@dataclass(frozen=True)
class SendMessage:
    content: str
    recipient: str
    thread_id: str | None = None


@runtime_checkable
class Channel(Protocol):
    """Required: ``name``, ``listen``, ``send``, ``health_check`` (seed 002). Optional attributes
    read with getattr: ``max_message_length`` (int, chunking) and ``capabilities`` (prompt text)."""

    name: str

    async def listen(self, bus: asyncio.Queue[ChannelMessage]) -> None:
        """Push inbound messages onto ``bus``; return when the source ends, raise on failure."""

    async def send(self, message: SendMessage) -> None: ...

    async def health_check(self) -> bool: ...
