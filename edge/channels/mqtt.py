"""``<base>/chat`` as a chat channel (``[mqtt] chat = true``): each message a prompt from the
person ``mqtt:<base>/chat`` (whoever the broker lets publish there), each answer on
``<base>/chat/reply``. Plain text both ways; it cannot ask for approvals.

The topic itself is the MQTT bridge's (:mod:`edge.mqtt.bridge`): this channel only reads the
prompts it queues and hands it the answers (:class:`ChatTopic`)."""

from __future__ import annotations

import asyncio
from typing import Protocol

from edge.channels.base import Channel, ChannelMessage, SendMessage


class ChatTopic(Protocol):
    """The bridge's chat topic, as this channel uses it."""

    chat_inbox: asyncio.Queue[str] | None
    """Prompts from ``<base>/chat``; None when the bridge takes none."""

    @property
    def connected(self) -> bool: ...

    @property
    def chat_topic(self) -> str: ...

    async def publish_reply(self, text: str) -> None:
        """Publish on ``<base>/chat/reply``; raises when the broker is not there."""
        ...


class MqttChatChannel(Channel):
    name = "mqtt"
    merges_bursts = False
    """A published message is whole."""
    capabilities = "Messages arrive and leave as MQTT payloads: plain text, no Markdown."

    def __init__(self, bridge: ChatTopic):
        if bridge.chat_inbox is None:
            raise ValueError("the bridge takes no prompts ([mqtt] chat and allow_commands)")
        self.bridge = bridge
        self.inbox = bridge.chat_inbox
        self.sender = bridge.chat_topic

    async def listen(self, bus: asyncio.Queue[ChannelMessage]) -> None:
        while True:
            text = await self.inbox.get()
            await bus.put(ChannelMessage(self.sender, self.sender, text, self.name))

    async def send(self, message: SendMessage) -> None:
        await self.bridge.publish_reply(message.content)

    async def health_check(self) -> bool:
        return self.bridge.connected
