"""A bare MQTT 5 client speaking the fleet protocol by hand, as another agent or edge-cli would:
a request with its properties (or without some), sealed with the key the fleet fixture files
for it on every agent (``TESTER``), or with none, or with another's name; a repeat of one, a
retained one; and what comes back on its answer topic, sealed or not."""

from __future__ import annotations

import asyncio
import json
import secrets
from typing import Any

import aiomqtt
from paho.mqtt.properties import Properties

from edge.fleet.envelope import reply_topic, request_properties
from edge.fleet.keys import decode_code
from edge.fleet.protocol import request_topic

TESTER = "tester"
TESTER_CODE = "TEST-TEST-TEST-TEST-TEST-TEST-TEST-TEST"
"""The key every agent of the fleet fixture shares with the raw asker."""


class RawAsker:
    def __init__(self, url: str, *, name: str = TESTER, code: str | None = TESTER_CODE,
                 reply_to: str | None = None):
        """``name``: who it says it is; ``code``: the key it seals with (None: unsealed);
        ``reply_to``: where it asks for answers (default: its own answer topic)."""
        host, port = url.removeprefix("mqtt://").split(":")
        self.name, self.key = name, decode_code(code) if code else None
        self.reply_to = reply_to or reply_topic(name, secrets.token_hex(4))
        self.client = aiomqtt.Client(host, int(port), identifier=f"raw-{secrets.token_hex(4)}",
                                     protocol=aiomqtt.ProtocolVersion.V5)
        self.answers: asyncio.Queue[tuple[bytes | None, dict[str, Any]]] = asyncio.Queue()
        self.arrivals: list[tuple[bytes | None, Any, bytes]] = []
        """Every message on its answer topic: (correlation, properties, payload)."""
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
            self.arrivals.append((correlation, message.properties, payload))
            await self.answers.put((correlation, json.loads(payload)))

    def request(self, base: str, op: str, args: dict[str, Any], *,
                correlation: bytes | None = None, expiry: int | None = 5,
                sent_ms: int | None = None, via: str = "agent",
                extra: tuple[tuple[str, str], ...] = ()) -> tuple[str, bytes, Properties, bytes]:
        """(topic, payload, properties, correlation) of a request as this asker seals it;
        ``extra``: user properties written after the sealed ones (unsealed)."""
        correlation = correlation or secrets.token_bytes(16)
        # the node at ``base``: its node_id is the base's last level, as the fixtures' are
        topic = request_topic(base.rsplit("/", 1)[-1])
        payload = json.dumps({"op": op, "args": args}).encode()
        props = request_properties(self.key, topic=topic, reply_to=self.reply_to,
                                   correlation=correlation, caller=self.name, via=via,
                                   expiry=expiry or 5, payload=payload, sent_ms=sent_ms)
        if expiry is None:
            del props.MessageExpiryInterval
        if extra:
            props.UserProperty = list(extra)  # paho adds these after those already there
        return topic, payload, props, correlation

    async def send(self, base: str, op: str, args: dict[str, Any], *, correlation: bytes | None = None,
                   expiry: int | None = 5, retain: bool = False, sent_ms: int | None = None,
                   via: str = "agent", extra: tuple[tuple[str, str], ...] = ()) -> bytes:
        topic, payload, props, correlation = self.request(
            base, op, args, correlation=correlation, expiry=expiry, sent_ms=sent_ms, via=via,
            extra=extra)
        await self.client.publish(topic, payload, qos=1, retain=retain, properties=props)
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
