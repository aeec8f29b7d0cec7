"""The web page's chat (``[web] listen``) as a channel: each message a prompt from the paired
browser's session ``web:<name>`` (verified by its cookie, :mod:`edge.web`), each answer (and each
receipt) pushed to that session's open pages on their live stream. It can ask for approvals: the
prompt reaches the asker's page, and the approval waits on every admin's Approvals tab.

The page's server owns the inbox and the streams (:class:`ChatHub`); this channel only reads the
prompts it queues and hands it the answers."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Protocol

from edge.channels.base import Channel, ChannelMessage, SendMessage

if TYPE_CHECKING:
    from edge.core.requester import Requester


class ChatHub(Protocol):
    """The web server's chat, as this channel uses it."""

    inbox: asyncio.Queue[tuple[str, str]]
    """(session name, text) from the page."""

    def deliver(self, session: str, text: str) -> None:
        """Push ``text`` to the open pages of ``session``."""
        ...


class WebChatChannel(Channel):
    name = "web"
    merges_bursts = False
    supports_approvals = True
    capabilities = "Messages appear on a web page as plain text (no Markdown is rendered)."

    def __init__(self, hub: ChatHub):
        self.hub = hub

    async def listen(self, bus: asyncio.Queue[ChannelMessage]) -> None:
        while True:
            session, text = await self.hub.inbox.get()
            await bus.put(ChannelMessage(session, session, text, self.name))

    async def send(self, message: SendMessage) -> None:
        self.hub.deliver(message.recipient, message.content)

    async def health_check(self) -> bool:
        return True

    async def request_approval(self, ctx: Requester, prompt: str, token: str,
                               always: bool = True) -> None:
        self.hub.deliver(ctx.reply_target or ctx.sender,
                         f"{prompt} (waiting for an admin on the Approvals tab, request {token})")

    async def approval_expired(self, ctx: Requester, token: str) -> None:
        self.hub.deliver(ctx.reply_target or ctx.sender, f"Approval request {token} expired.")
