"""Preflight checks before a message is handled: duplicate
ids dropped, sender allowlist per channel (empty = nobody, ``*`` = everyone), mention required in
groups when configured, and a per-sender rate limit for model turns.

The allowlist runs before runtime commands: hardware commands actuate pins, so an unknown sender
must not reach them."""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

from edge.channels.base import ChannelMessage
from edge.core.ratelimit import SlidingWindow

log = logging.getLogger(__name__)

SEEN_IDS_KEPT = 2048
RATE_WINDOW_SECONDS = 60.0


@dataclass
class ChannelAccess:
    allowed: set[str] = field(default_factory=set)
    """Shared with the channel, so a pairing takes effect at once."""
    require_mention_in_groups: bool = True
    rate_limit_per_minute: int = 20

    def allows(self, sender: str) -> bool:
        return "*" in self.allowed or sender in self.allowed


@dataclass
class Preflight:
    access: dict[str, ChannelAccess] = field(default_factory=dict)
    clock: Callable[[], float] = time.monotonic
    _seen: OrderedDict[tuple[str, str], bool] = field(default_factory=OrderedDict)
    _rates: SlidingWindow = field(init=False)

    def __post_init__(self) -> None:
        self._rates = SlidingWindow(RATE_WINDOW_SECONDS, clock=self.clock)

    def admit(self, msg: ChannelMessage) -> str | None:
        """None when the message may proceed, else the reason it is dropped (logged)."""
        seen_key = (msg.channel, msg.id)
        if seen_key in self._seen:
            return self._drop(msg, "duplicate message id")
        self._seen[seen_key] = True
        while len(self._seen) > SEEN_IDS_KEPT:
            self._seen.popitem(last=False)
        access = self.access.get(msg.channel, ChannelAccess())
        # defence in depth: a channel checks its allowlist first (a stranger hears its pairing
        # hint and nothing is fetched), and this is the one check every channel's message passes,
        # a channel that forgets its own included
        if not access.allows(msg.sender):
            return self._drop(msg, "sender not in the channel's allowlist")
        if msg.is_group and access.require_mention_in_groups and not msg.mentioned:
            return self._drop(msg, "group message without a mention")
        return None

    def within_rate(self, msg: ChannelMessage) -> bool:
        access = self.access.get(msg.channel, ChannelAccess())
        if self._rates.take(msg.caller, access.rate_limit_per_minute):
            return True
        log.warning("rate_limited by=%s limit=%d/min", msg.caller, access.rate_limit_per_minute)
        return False

    @staticmethod
    def _drop(msg: ChannelMessage, reason: str) -> str:
        log.info("message_dropped channel=%s sender=%s id=%s reason=%r",
                 msg.channel, msg.sender, msg.id, reason)
        return reason
