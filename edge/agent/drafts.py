"""Streaming drafts: for a channel that
supports them, the reply appears as a draft message on the first streamed text, is edited in
place as text arrives (the channel bounds the edit rate), and is finalised with the reply."""

from __future__ import annotations

import logging

from edge.agent.outbound import chunk_text, deliver
from edge.channels.base import Channel, ChannelMessage, SendMessage

log = logging.getLogger(__name__)


def supports_drafts(channel: Channel) -> bool:
    return channel.stream_drafts


class Draft:
    def __init__(self, channel: Channel, msg: ChannelMessage):
        self.channel = channel
        self.msg = msg
        self.message_id: str | None = None

    async def update(self, text: str) -> None:
        """The reply so far; failures only cost the draft, never the turn."""
        try:
            if self.message_id is None:
                self.message_id = await self.channel.send_draft(
                    SendMessage(text, self.msg.reply_target, self.msg.thread_id))
            else:
                await self.channel.update_draft(self.msg.reply_target, self.message_id, text)
        except Exception as exc:
            log.warning("draft_update_failed channel=%s error=%r", self.channel.name, exc)

    async def finish(self, reply: str, base_delay: float = 1.0) -> None:
        """Turn the draft into the final reply; what does not fit follows as messages."""
        if self.message_id is None:
            await deliver(self.channel, SendMessage(reply, self.msg.reply_target, self.msg.thread_id),
                          base_delay)
            return
        first, *rest = chunk_text(reply, self.channel.max_message_length)
        await self.channel.finalize_draft(self.msg.reply_target, self.message_id, first)
        if rest:
            await deliver(self.channel, SendMessage("\n\n".join(rest), self.msg.reply_target,
                                                    self.msg.thread_id), base_delay)
