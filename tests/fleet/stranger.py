"""A stranger on the broker: a bare MQTT 5 client holding no key of the pair it attacks (at most
one from another pair), as anyone the broker admits could be. It hears the topics it subscribes
to, with their properties (a request's correlation is there in clear); publishes anything (a
node's availability and description, a captured request again); and answers every request on a
node's request topic before the node could, on the asker's answer topic with the request's own
correlation.

>>> # async with Stranger(broker, "edge-agent/b/request") as stranger:
>>> #     stranger.answer_requests(FORGERIES); ...; stranger.carrying(correlation)
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import aiomqtt
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from edge.fleet.envelope import answer_properties, now_ms
from edge.fleet.keys import decode_code
from tests.fakes.mosquitto import Mosquitto
from tests.fleet.wire import TESTER_CODE

FORGED_VALUE = {"ok": True, "data": {"value": 1.0}}
"""What a forger says a node answered: done, and the pin reads on."""


@dataclass(frozen=True)
class Heard:
    topic: str
    payload: bytes
    properties: Any
    retain: bool

    @property
    def correlation(self) -> bytes | None:
        value = getattr(self.properties, "CorrelationData", None)
        return value if isinstance(value, bytes) else None

    def copy_properties(self) -> Properties:
        """The PUBLISH properties it came with, to send it again as it was."""
        props = Properties(PacketTypes.PUBLISH)  # type: ignore[no-untyped-call]
        for name in ("ResponseTopic", "CorrelationData", "MessageExpiryInterval",
                     "UserProperty"):
            value = getattr(self.properties, name, None)
            if value is not None:
                setattr(props, name, value)
        return props


Forgery = Callable[[Heard, bytes], Properties]
"""The properties of a forged answer to a request (heard), whose payload is the bytes given."""


def unsealed(request: Heard, payload: bytes) -> Properties:
    props = Properties(PacketTypes.PUBLISH)  # type: ignore[no-untyped-call]
    props.CorrelationData = request.correlation
    return props


def node_of(request: Heard) -> str:
    """The node a request was sent to (``edge-agent/<node>/request``)."""
    return request.topic.rsplit("/", 2)[-2]


def made_up_mac(request: Heard, payload: bytes) -> Properties:
    """The node's name as sender, a send time of now, and a MAC of the right shape."""
    props = unsealed(request, payload)
    props.UserProperty = [("sender", node_of(request)), ("sent", str(now_ms())),
                          ("mac", secrets.token_hex(32))]
    return props


def another_pairs_key(request: Heard, payload: bytes) -> Properties:
    """Sealed properly, as the node, but with the key of a pair the stranger is in (``tester``'s,
    which every agent of the fleet fixture holds): an insider of another pair."""
    return answer_properties(decode_code(TESTER_CODE), topic=request.properties.ResponseTopic,
                             correlation=request.correlation or b"", sender=node_of(request),
                             payload=payload)


FORGERIES: tuple[Forgery, ...] = (unsealed, made_up_mac, another_pairs_key)


class Stranger:
    def __init__(self, broker: Mosquitto, *topics: str):
        self.topics = topics or ("#",)
        self.client = aiomqtt.Client("127.0.0.1", broker.port,
                                     identifier=f"stranger-{secrets.token_hex(4)}",
                                     protocol=aiomqtt.ProtocolVersion.V5)
        self.heard: list[Heard] = []
        self.forged = 0
        """Forged answers published."""
        self._forgeries: tuple[Forgery, ...] = ()
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Stranger:
        await self.client.__aenter__()
        for topic in self.topics:
            await self.client.subscribe(topic, qos=1)
        self._task = asyncio.create_task(self._hear())
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        with contextlib.suppress(aiomqtt.MqttError):
            await self.client.__aexit__(None, None, None)

    async def _hear(self) -> None:
        async for message in self.client.messages:
            payload = message.payload if isinstance(message.payload, bytes) else b""
            heard = Heard(message.topic.value, payload, message.properties, bool(message.retain))
            self.heard.append(heard)
            if self._forgeries and heard.topic.endswith("/request") and not heard.retain:
                await self._forge(heard)

    async def _forge(self, request: Heard) -> None:
        reply_to = getattr(request.properties, "ResponseTopic", None)
        if not reply_to or request.correlation is None:
            return
        body = json.dumps(FORGED_VALUE).encode()
        for forgery in self._forgeries:
            await self.client.publish(reply_to, body, qos=1, properties=forgery(request, body))
            self.forged += 1

    def answer_requests(self, forgeries: tuple[Forgery, ...] = FORGERIES) -> None:
        """From now on, answer every request heard with each forgery, at once."""
        self._forgeries = forgeries

    def on(self, topic: str) -> list[Heard]:
        return [h for h in self.heard if h.topic == topic]

    def carrying(self, correlation: bytes) -> list[Heard]:
        """What was heard with this correlation, on any topic."""
        return [h for h in self.heard if h.correlation == correlation]

    async def publish(self, topic: str, payload: bytes | str, *,
                      properties: Properties | None = None, retain: bool = False) -> None:
        await self.client.publish(topic, payload, qos=1, retain=retain, properties=properties)

    async def replay(self, heard: Heard) -> None:
        """Send a message heard earlier again, bytes and properties as they were."""
        await self.publish(heard.topic, heard.payload, properties=heard.copy_properties())

    async def pose_as_node(self, node_id: str, pins: list[str]) -> None:
        """Say on the broker what a node ``node_id`` would (retained): online, its health and
        description, at ``edge-agent/<node_id>``."""
        base = f"edge-agent/{node_id}"
        description = {"version": "9.9.9", "node_id": node_id,
                       "boards": [{"name": "gpio", "kind": "gpio", "connected": True}],
                       "pins": [{"name": pin, "pin": f"gpio:{pin}", "mode": "output"}
                                for pin in pins]}
        health = {"version": "9.9.9", "node_id": node_id, "time": now_ms() / 1000,
                  "uptime_seconds": 1.0, "boards": {"gpio": True}}
        await self.publish(f"{base}/node", json.dumps(description), retain=True)
        await self.publish(f"{base}/health", json.dumps(health), retain=True)
        await self.publish(f"{base}/availability", "online", retain=True)
