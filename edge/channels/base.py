"""The Channel protocol and message types.

``listen`` pushes every inbound message onto one shared bus (an asyncio.Queue) instead of calling
back, so the runtime consumes from one place; ``send`` delivers a reply.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from abc import abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from edge.core.exc import EdgeError
from edge.core.requester import Requester

if TYPE_CHECKING:
    from edge.channels.voice_queue import VoiceNoteQueue


@dataclass(frozen=True)
class ChannelMessage:
    sender: str
    reply_target: str
    content: str
    channel: str
    id: str = field(default_factory=lambda: secrets.token_hex(16))
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
    def requester(self) -> Requester:
        """Who asked, as the tools, the policy and approvals take it (a direct command); its
        ``why`` is this message (the audit trail's record of why, a turn's receipt)."""
        return Requester(self.channel, self.sender, self.reply_target, self.thread_id,
                         why=f"message {self.id}")

    @property
    def conversation_key(self) -> str:
        """History key: ``{channel}_{reply_target}_{sender}``, thread before sender."""
        thread = f"_{self.thread_id}" if self.thread_id else ""
        return f"{self.channel}_{self.reply_target}{thread}_{self.sender}"

    @property
    def interruption_scope(self) -> str:
        """Channel + reply target + sender + thread: a newer message cancels only within it."""
        return f"{self.channel}\0{self.reply_target}\0{self.sender}\0{self.thread_id or ''}"

    @property
    def session_key(self) -> str:
        """Session key: ``agent:main:<channel>:<kind>:<peer>[:thread:<id>]``; in groups
        the peer is chat and sender, keeping history per sender."""
        kind, peer = ("group", f"{self.reply_target}:{self.sender}") if self.is_group \
            else ("direct", self.sender)
        thread = f":thread:{self.thread_id}" if self.thread_id else ""
        return f"agent:main:{self.channel}:{kind}:{peer}{thread}"


@dataclass(frozen=True)
class SendMessage:
    content: str
    recipient: str
    thread_id: str | None = None


class ChannelCapabilityMissing(EdgeError):
    """A channel was asked for something it declared it cannot do (drafts, approvals)."""


BACKOFF_START_SECONDS = 1.0
BACKOFF_MAX_SECONDS = 60.0


@runtime_checkable
class Channel(Protocol):
    """A chat channel. Required: ``name``, :meth:`listen`, :meth:`send`, :meth:`health_check`.
    Adapters subclass this Protocol; every optional capability below has a default
    that does nothing (the nanobot way), so the runtime calls them unconditionally and a
    misspelt member is a type error rather than a silently missing feature."""

    name: str
    max_message_length: int | None = None
    """Longest message the channel accepts; longer replies are sent in chunks."""
    capabilities: str = ""
    """What the model should know about this channel (formatting), for the system prompt."""
    reconnect_backoff: tuple[float, float] = (BACKOFF_START_SECONDS, BACKOFF_MAX_SECONDS)
    """(first, longest) wait between restarts of a failed :meth:`listen`, in seconds."""
    stream_drafts: bool = False
    """Replies appear as a draft edited while the model streams (:meth:`send_draft`...)."""
    supports_approvals: bool = False
    """The channel can ask a person to approve an actuation (:meth:`request_approval`)."""
    merges_bursts: bool = True
    """Texts from one sender arriving within ``[agent] debounce_ms`` become one turn: people on
    chat apps send a thought in bursts. False where every message is complete as it arrives (a
    terminal line): it goes to the agent at once."""
    newer_message_interrupts: bool = True
    """With ``[agent] interrupt_on_new_message``, a newer message cancels the sender's running
    turn. False where messages are a script to answer in order (piped input)."""
    last_ok: float | None = None
    """When the channel last worked (epoch seconds); status uses it for "down since"."""
    failing_since: float | None = None
    """When the current run of failures began (epoch seconds), None while it works: status
    reports the channel down from then, without waiting for a restart."""
    last_error: str | None = None
    """Why it last failed (a poll that got no answer), for status and the heartbeat's notice."""

    @abstractmethod
    async def listen(self, bus: asyncio.Queue[ChannelMessage]) -> None:
        """Push inbound messages onto ``bus``; return when the source ends, raise on failure."""
        ...

    @abstractmethod
    async def send(self, message: SendMessage) -> None: ...

    @abstractmethod
    async def health_check(self) -> bool: ...

    def stalled(self) -> bool:
        """True when :meth:`listen` still runs but no longer works (the supervisor restarts it)."""
        return False

    async def start_typing(self, recipient: str) -> None:
        """Show "typing..." to ``recipient`` for a few seconds."""
        return None

    async def send_draft(self, message: SendMessage) -> str:
        """Send the first text of a streamed reply; returns the draft's message id."""
        raise ChannelCapabilityMissing(f"channel {self.name} has no drafts")

    async def update_draft(self, recipient: str, message_id: str, text: str) -> None:
        raise ChannelCapabilityMissing(f"channel {self.name} has no drafts")

    async def finalize_draft(self, recipient: str, message_id: str, text: str) -> None:
        raise ChannelCapabilityMissing(f"channel {self.name} has no drafts")

    async def request_approval(self, ctx: Requester, prompt: str, token: str,
                               always: bool = True) -> None:
        """Ask the person in ``ctx`` to approve (buttons or a reply carrying ``token``); offer
        *Always* only when ``always`` (not for a requester nobody verified)."""
        raise ChannelCapabilityMissing(f"channel {self.name} cannot ask for approvals")

    async def approval_expired(self, ctx: Requester, token: str) -> None:
        """The approval ``token`` asked for with :meth:`request_approval` timed out unanswered:
        say so where it was asked (Telegram edits the prompt and removes its buttons)."""
        return None

    def hear_voice_notes(self, queue: VoiceNoteQueue) -> None:
        """Transcribe voice notes through the agent's one ``queue`` (its transcriber None: answer
        each with how to set it up), the transcript going on as typed text
        (:mod:`edge.channels.voice`). Called once, before :meth:`listen`; channels that receive
        no audio ignore it."""
        return None

    async def aclose(self) -> None:
        """Release connections (called once at shutdown)."""
        return None
