"""A bare MQTT 5 client speaking the fleet protocol by hand, as another agent or edge-cli would:
a request with its properties (or without some), a repeat of one, a retained one."""

from __future__ import annotations

import asyncio
import json
import secrets
from typing import Any

import aiomqtt
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

CALLER = "cli:tester@bench"


class RawAsker:
    def __init__(self, url: str):
        host, port = url.removeprefix("mqtt://").split(":")
        self.reply_to = f"edge-agent/_cli/{secrets.token_hex(4)}/response"
        self.client = aiomqtt.Client(host, int(port), identifier=f"raw-{secrets.token_hex(4)}",
                                     protocol=aiomqtt.ProtocolVersion.V5)
        self.answers: asyncio.Queue[tuple[bytes | None, dict[str, Any]]] = asyncio.Queue()
        self._reader: asyncio.Task[None] | None = None

    async def __aenter__(self) -> RawAsker:
        await self.client.__aenter__()
        await self.client.subscribe(self.reply_to, qos=1)
        self._reader = asyncio.create_task(self._read())
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._reader is not None:
            self._reader.cancel()
        await self.client.__aexit__(None, None, None)

    async def _read(self) -> None:
        async for message in self.client.messages:
            correlation = getattr(message.properties, "CorrelationData", None)
            payload = message.payload if isinstance(message.payload, bytes) else b"{}"
            await self.answers.put((correlation, json.loads(payload)))

    async def send(self, base: str, op: str, args: dict[str, Any], *, correlation: bytes | None = None,
                   expiry: int | None = 5, retain: bool = False) -> bytes:
        correlation = correlation or secrets.token_bytes(16)
        props = Properties(PacketTypes.PUBLISH)
        props.ResponseTopic = self.reply_to
        props.CorrelationData = correlation
        props.UserProperty = [("caller", CALLER)]
        if expiry is not None:
            props.MessageExpiryInterval = expiry
        await self.client.publish(f"{base}/request", json.dumps({"op": op, "args": args}),
                                  qos=1, retain=retain, properties=props)
        return correlation

    async def ask(self, base: str, op: str, args: dict[str, Any], **options: Any) -> dict[str, Any]:
        """Send, then the answer that carries the request's correlation data."""
        correlation = await self.send(base, op, args, **options)
        async with asyncio.timeout(10):
            while True:
                came, answer = await self.answers.get()
                if came == correlation:
                    return answer

    async def clear_retained(self, topic: str) -> None:
        await self.client.publish(topic, b"", qos=1, retain=True)
