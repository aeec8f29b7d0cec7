"""``<base>/chat`` as a chat channel (``[mqtt] chat = true``): each message a prompt from the
person ``mqtt:<base>/chat`` (whoever the broker lets publish there), each answer on
``<base>/chat/reply``. Plain text both ways; it cannot ask for approvals."""

from __future__ import annotations

import asyncio

from edge.channels.base import Channel, ChannelMessage, SendMessage
from edge.mqtt.bridge import MqttBridge


class MqttChatChannel(Channel):
    name = "mqtt"
    merges_bursts = False
    """A published message is whole."""
    capabilities = "Messages arrive and leave as MQTT payloads: plain text, no Markdown."

    def __init__(self, bridge: MqttBridge):
        if bridge.chat_inbox is None:
            raise ValueError("the bridge takes no prompts ([mqtt] chat and allow_commands)")
        self.bridge = bridge
        self.inbox = bridge.chat_inbox
        self.sender = bridge.topics.chat

    async def listen(self, bus: asyncio.Queue[ChannelMessage]) -> None:
        while True:
            text = await self.inbox.get()
            await bus.put(ChannelMessage(self.sender, self.sender, text, self.name))

    async def send(self, message: SendMessage) -> None:
        await self.bridge.publish_reply(message.content)

    async def health_check(self) -> bool:
        return self.bridge.connected
