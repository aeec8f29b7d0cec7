"""A fleet message's MQTT 5 properties, sealed with the pair's key (:mod:`edge.fleet.keys`).

A **request** carries ``ResponseTopic``, ``CorrelationData``, ``MessageExpiryInterval`` and the
user properties ``caller`` (the sender's node_id: the name the node files the pair's key under),
``via`` (``agent``, or ``cli:user@host`` for an operator's ``edge-cli --node``), ``sent`` (the
absolute send time, epoch milliseconds) and ``mac``. An **answer** carries the request's
``CorrelationData`` and ``sender``, ``sent`` and ``mac``.

The answer goes only to the asker's own topic, bound to its name (:func:`reply_topic`):
``edge-agent/_fleet/<caller>/response`` (an edge-cli run adds a level of its own). A request
naming any other topic is not run.

Time: a request is run only within ``SKEW_SECONDS`` of its send time and expiry by the node's
clock; the clocks of the two machines may disagree by that much (``doctor`` warns beyond it).

>>> props = request_properties(b"k" * 20, topic="edge-agent/_fleet/shed/request",
...     reply_to=reply_topic("kitchen"), correlation=b"c" * 16, caller="kitchen", via="agent",
...     expiry=5, payload=b"{}", sent_ms=1)
>>> envelope = Envelope.read(props)
>>> envelope.caller, envelope.reply_to, envelope.verified_by(b"k" * 20, "edge-agent/_fleet/shed/request", b"{}")
('kitchen', 'edge-agent/_fleet/kitchen/response', True)
>>> envelope.verified_by(b"k" * 20, "edge-agent/_fleet/barn/request", b"{}")  # meant for another node
False
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any

from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from edge.config.mqtt import NODE_ID
from edge.fleet.keys import Seal, seal, verify
from edge.fleet.protocol import FLEET_BASE, MAX_EXPIRY_SECONDS, Answer, AnswerCheck, Response

SKEW_SECONDS = 2.0
"""How far apart the two machines' clocks may be; beyond it, requests are refused as too old
or from the future, and ``doctor`` says so."""
VIA = re.compile(r"agent|cli:[A-Za-z0-9_.-]{1,64}@[A-Za-z0-9_.-]{1,253}")


def now_ms() -> int:
    return int(time.time() * 1000)


def reply_topic(caller: str, run: str | None = None) -> str:
    """Where answers to ``caller`` go: ``edge-agent/_fleet/<caller>/response`` (``/<run>``)."""
    return f"{FLEET_BASE}/{caller}/response" + (f"/{run}" if run else "")


def bound_to(reply_to: str, caller: str) -> bool:
    """Whether ``reply_to`` is ``caller``'s own answer topic (or one level below it)."""
    own = reply_topic(caller)
    rest = reply_to.removeprefix(own)
    return rest == "" or (rest.startswith("/") and re.fullmatch(r"/[A-Za-z0-9_-]{1,64}", rest)
                          is not None)


def _user(properties: Properties | None) -> dict[str, str]:
    pairs = getattr(properties, "UserProperty", None) if properties is not None else None
    found: dict[str, str] = {}
    for key, value in pairs or []:
        found.setdefault(str(key), str(value))
    return found


def _get(properties: Properties | None, name: str) -> Any:
    return getattr(properties, name, None) if properties is not None else None


def correlation_of(properties: Properties | None) -> bytes | None:
    value = _get(properties, "CorrelationData")
    return value if isinstance(value, bytes) else None


def request_properties(key: bytes | None, *, topic: str, reply_to: str, correlation: bytes,
                       caller: str, via: str, expiry: int, payload: bytes,
                       sent_ms: int | None = None) -> Properties:
    """A request's PUBLISH properties, sealed with ``key`` (unsealed without one: only for a
    node that takes unauthenticated requests)."""
    if not NODE_ID.match(caller) or not VIA.fullmatch(via):
        raise ValueError(f"caller {caller!r} must be a node id and via {via!r} agent or "
                         "cli:<user>@<host>")
    expiry = max(1, min(int(expiry), MAX_EXPIRY_SECONDS))
    sent = now_ms() if sent_ms is None else sent_ms
    props = Properties(PacketTypes.PUBLISH)  # type: ignore[no-untyped-call]
    props.ResponseTopic = reply_to
    props.CorrelationData = correlation
    props.MessageExpiryInterval = expiry
    user = [("caller", caller), ("via", via), ("sent", str(sent))]
    if key is not None:
        fields = Seal("request", topic, reply_to, correlation, caller, via, sent, expiry)
        user.append(("mac", seal(key, fields, payload)))
    props.UserProperty = user
    return props


def answer_properties(key: bytes | None, *, topic: str, correlation: bytes, sender: str,
                      payload: bytes, sent_ms: int | None = None) -> Properties:
    """An answer's PUBLISH properties, sealed with ``key`` when the request was."""
    sent = now_ms() if sent_ms is None else sent_ms
    props = Properties(PacketTypes.PUBLISH)  # type: ignore[no-untyped-call]
    props.CorrelationData = correlation
    user = [("sender", sender), ("sent", str(sent))]
    if key is not None:
        fields = Seal("answer", topic, "", correlation, sender, "agent", sent, 0)
        user.append(("mac", seal(key, fields, payload)))
    props.UserProperty = user
    return props


def answer_verified(key: bytes, properties: Properties | None, *, topic: str, sender: str,
                    payload: bytes) -> int | None:
    """The answer's send time (epoch ms) when it is ``sender``'s under ``key``, else None."""
    user = _user(properties)
    correlation = correlation_of(properties)
    sent, mac = user.get("sent", ""), user.get("mac", "")
    if correlation is None or user.get("sender") != sender or not sent.isdigit() or not mac:
        return None
    fields = Seal("answer", topic, "", correlation, sender, "agent", int(sent), 0)
    return int(sent) if verify(key, fields, payload, mac) else None


@dataclass(frozen=True)
class Envelope:
    """What a request's properties say: who asks (as the key will tell), where to answer, when
    it was sent and for how long it holds."""

    reply_to: str
    correlation: bytes
    caller: str
    via: str
    sent_ms: int
    expiry: int
    mac: str | None

    @classmethod
    def read(cls, properties: Properties | None) -> Envelope:
        """A ValueError naming what is missing or malformed."""
        reply_to, correlation, expiry = (_get(properties, "ResponseTopic"),
                                         correlation_of(properties),
                                         _get(properties, "MessageExpiryInterval"))
        user = _user(properties)
        caller, via, sent = user.get("caller", ""), user.get("via", "agent"), user.get("sent", "")
        if not isinstance(reply_to, str) or not reply_to or any(c in reply_to for c in "#+"):
            raise ValueError("a request needs a ResponseTopic (without wildcards)")
        if not correlation:
            raise ValueError("a request needs CorrelationData")
        if not NODE_ID.match(caller) or not VIA.fullmatch(via):
            raise ValueError("a request needs a user property caller (a node id)")
        if not sent.isdigit():
            raise ValueError("a request needs a user property sent (epoch milliseconds)")
        if not isinstance(expiry, int) or expiry <= 0:
            raise ValueError("a request needs a MessageExpiryInterval (seconds, at most "
                             f"{MAX_EXPIRY_SECONDS}): one that never expires could act at any "
                             "later time")
        return cls(reply_to, correlation, caller, via, int(sent), min(expiry, MAX_EXPIRY_SECONDS),
                   user.get("mac") or None)

    def verified_by(self, key: bytes, topic: str, payload: bytes) -> bool:
        """Whether the request was sealed with ``key`` for ``topic`` (this node) as it is."""
        if self.mac is None:
            return False
        fields = Seal("request", topic, self.reply_to, self.correlation, self.caller, self.via,
                      self.sent_ms, self.expiry)
        return verify(key, fields, payload, self.mac)

    def too_late(self, at_ms: int) -> bool:
        """Past its expiry by this clock (allowing for the clocks' disagreement)."""
        return at_ms > self.sent_ms + int((self.expiry + SKEW_SECONDS) * 1000)

    def from_the_future(self, at_ms: int) -> bool:
        return self.sent_ms > at_ms + int(SKEW_SECONDS * 1000)


def answer_check(key: bytes | None, *, topic: str, node: str) -> AnswerCheck:
    """How an asker takes the answer to a request sent to ``node``, on ``topic``: sealed with
    ``key`` by ``node``; without a key (a node that takes unauthenticated requests), unsealed,
    and said to be so."""
    def check(properties: Any, payload: bytes) -> Answer | None:
        if key is None:
            return Answer(Response.decode(payload), authenticated=False)
        sent = answer_verified(key, properties, topic=topic, sender=node, payload=payload)
        if sent is None:
            return None
        return Answer(Response.decode(payload), authenticated=True, clock_offset_ms=sent - now_ms())

    return check
