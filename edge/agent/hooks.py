"""Hooks: ``on_message_received`` and ``on_message_sending`` may
continue with a modified message or cancel it. A hook overrides either method (or both)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Protocol

from edge.channels.base import ChannelMessage

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Cancel:
    reason: str


class Hook(Protocol):
    """Subclass and override either method; the defaults pass everything through."""

    async def on_message_received(self, msg: ChannelMessage) -> ChannelMessage | Cancel:
        return msg

    async def on_message_sending(self, msg: ChannelMessage, reply: str) -> str | Cancel:
        return reply


class HookRunner:
    def __init__(self, hooks: list[Hook] | None = None):
        self.hooks = list(hooks or [])

    async def received(self, msg: ChannelMessage) -> ChannelMessage | None:
        for hook in self.hooks:
            result = await hook.on_message_received(msg)
            if isinstance(result, Cancel):
                log.info("hook_cancelled stage=received by=%s reason=%r", msg.caller, result.reason)
                return None
            msg = result
        return msg

    async def sending(self, msg: ChannelMessage, reply: str) -> str | None:
        for hook in self.hooks:
            result = await hook.on_message_sending(msg, reply)
            if isinstance(result, Cancel):
                log.info("hook_cancelled stage=sending by=%s reason=%r", msg.caller, result.reason)
                return None
            reply = result
        return reply
