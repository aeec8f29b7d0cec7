"""The command line's side of the fleet: what the broker keeps about each node (its retained
availability, health and description), and one command asked of a node through the broker.

A node is a base topic with a retained ``health`` or ``node`` (JSON naming its ``node_id``);
its ``availability`` says whether it is online. Bases of one to three levels are found
(``edge-agent/shed``, or a custom ``base_topic`` such as ``home/garden/shed``), so a node need
not use the default base to be listed; a sensor's ``<base>/<sensor>/availability`` and other
devices' availability topics are not nodes (they have no health).

A command is one MQTT 5 request (:mod:`edge.fleet.protocol`): QoS 1, never retained, expiring
after ``expiry`` seconds, answered on this run's own response topic with the node's result. It
is sent once: no answer within the expiry is a failure that says the command may or may not
have run, never a retry.

The functions take a maker of aiomqtt clients (called in their event loop, which aiomqtt
needs) and connect once; the command line makes them from ``[mqtt]`` with
:mod:`edge.mqtt.link` (:func:`edge.cli.fleet_cmd.on_broker`): the fleet package sits below the
MQTT bridge, which uses it, so it does not reach back. A broker that cannot be reached raises
aiomqtt's error (or OSError), which the caller words. Imported only by ``edge-cli fleet`` and
``edge-cli --node``: aiomqtt and pydantic stay off the other commands' path.
"""

from __future__ import annotations

import asyncio
import getpass
import json
import re
import socket
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import aiomqtt

from edge.control.ops import OpResult
from edge.core.exc import EdgeError
from edge.fleet.envelope import (
    SKEW_SECONDS,
    answer_check,
    correlation_of,
    reply_topic,
    request_properties,
)
from edge.fleet.keys import FleetKeys
from edge.fleet.protocol import (
    DEFAULT_EXPIRY_SECONDS,
    NODE_SUFFIX,
    AnswerCheck,
    Request,
    new_correlation,
    request_topic,
)

SETTLE_SECONDS = 0.2
"""The retained messages are in once none has come for this long..."""
SURVEY_SECONDS = 2.0
"""...or after this long at most."""
PROGRESS_AFTER_SECONDS = 0.5
"""A survey slower than this says so on a terminal."""
KINDS = ("availability", "health", NODE_SUFFIX)
BASE_DEPTHS = (1, 2, 3)


class NodeUnknown(EdgeError):
    """No node of that name on the broker; the message lists those there are (exit 1)."""


@dataclass
class NodeSeen:
    """One node as the broker keeps it: its base topic, and what it last said (retained)."""

    base: str
    availability: str | None = None
    health: dict[str, Any] = field(default_factory=dict)
    description: dict[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        """Its node_id (the base's last level when it names none)."""
        named = self.health.get("node_id") or self.description.get("node_id")
        return str(named) if named else self.base.rsplit("/", 1)[-1]

    @property
    def online(self) -> bool:
        return self.availability == "online"

    @property
    def is_node(self) -> bool:
        return bool(self.health or self.description)


def caller() -> str:
    """``cli:<user>@<host>``: on whose behalf this key holder asks, as the node's audit trail
    notes beside the key's name (both kept to the protocol's alphabet)."""
    def safe(text: str, size: int) -> str:
        return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-")[:size] or "unknown"

    return f"cli:{safe(getpass.getuser(), 64)}@{safe(socket.gethostname(), 253)}"


def subscriptions() -> list[tuple[str, int]]:
    """Every base of one to three levels' availability, health and description."""
    return [("+/" * depth + kind, 1) for depth in BASE_DEPTHS for kind in KINDS]


def _text(message: aiomqtt.Message) -> str:
    payload = message.payload
    if isinstance(payload, (bytes, bytearray)):
        return bytes(payload).decode(errors="replace").strip()
    return "" if payload is None else str(payload)


class Survey:
    """The retained availability, health and description of every node, as they come in."""

    def __init__(self) -> None:
        self.seen: dict[str, NodeSeen] = {}

    def take(self, topic: str, text: str) -> None:
        """Keep a retained message about a base (an empty one clears what it said)."""
        base, _, kind = topic.rpartition("/")
        if kind not in KINDS or not base:
            return
        node = self.seen.setdefault(base, NodeSeen(base))
        if kind == "availability":
            node.availability = text or None
            return
        try:
            value = json.loads(text) if text else {}
        except ValueError:
            value = {}
        value = value if isinstance(value, dict) else {}
        if kind == "health":
            node.health = value
        else:
            node.description = value

    @property
    def nodes(self) -> dict[str, NodeSeen]:
        """The nodes among the bases seen, by name."""
        found: dict[str, NodeSeen] = {}
        for base in sorted(self.seen):
            node = self.seen[base]
            if node.is_node:
                found.setdefault(node.name, node)
        return found

    def complete(self, name: str) -> bool:
        """Whether ``name``'s availability and health are in (no need to wait for more)."""
        node = self.nodes.get(name)
        return node is not None and node.availability is not None and bool(node.health)


async def _collect(messages: AsyncIterator[aiomqtt.Message], survey: Survey, *,
                   settle: float, at_most: float, done: Callable[[], bool] = lambda: False,
                   on_slow: Callable[[], None] | None = None) -> None:
    """Take retained messages until none came for ``settle`` seconds, ``done()`` holds, or
    ``at_most`` seconds have passed; ``on_slow`` once past :data:`PROGRESS_AFTER_SECONDS`."""
    loop = asyncio.get_running_loop()
    began = loop.time()
    while not done():
        waited = loop.time() - began
        if waited >= at_most:
            return
        if on_slow is not None and waited > PROGRESS_AFTER_SECONDS:
            on_slow()
            on_slow = None
        try:
            message = await asyncio.wait_for(anext(messages), min(settle, at_most - waited))
        except TimeoutError:
            return
        if message.retain:
            survey.take(message.topic.value, _text(message))


async def survey(connect: Callable[[], aiomqtt.Client], *, settle: float = SETTLE_SECONDS,
                 at_most: float = SURVEY_SECONDS,
                 on_slow: Callable[[], None] | None = None) -> dict[str, NodeSeen]:
    """Every node on the broker, by name (``on_slow()`` once, when it takes a while)."""
    found = Survey()
    async with connect() as client:
        await client.subscribe(subscriptions())
        await _collect(aiter(client.messages), found, settle=settle, at_most=at_most,
                       on_slow=on_slow)
    return found.nodes


def unknown(name: str, nodes: dict[str, NodeSeen]) -> NodeUnknown:
    known = ", ".join(f"{n} ({'online' if node.online else 'offline'})"
                      for n, node in sorted(nodes.items())) or "none"
    return NodeUnknown(f"no node {name!r} on the broker; the nodes there: {known} "
                       "(`edge-cli fleet` lists them)")


def no_answer(name: str, expiry: int) -> OpResult:
    return OpResult(False, f"no answer from node {name} within {expiry} s; it may or may not "
                    "have run", exit_code=1)


class NotPaired(EdgeError):
    """No key is shared with that node (exit 1); the message says how to pair."""


async def ask(connect: Callable[[], aiomqtt.Client], name: str, op: str, args: dict[str, Any], *,
              keys: FleetKeys, me: str, allow_unauthenticated: bool = False,
              expiry: int = DEFAULT_EXPIRY_SECONDS) -> OpResult:
    """Run ``op`` on node ``name`` through the broker, once, sealed with the key this machine
    shares with it (``me``: this machine's node_id, the name the node files the key under):
    its result, taken only when sealed by the node, or a failure saying it is not paired
    (NotPaired), unknown (NodeUnknown), offline (nothing sent), did not answer within
    ``expiry``, or the connection broke after the request went out."""
    key = keys.get(name)
    found = Survey()
    reply_to, correlation = reply_topic(me, new_correlation().hex()[:16]), new_correlation()
    check = answer_check(key, topic=reply_to, node=name)
    sent = False
    try:
        async with connect() as client:
            messages = aiter(client.messages)
            await client.subscribe([*subscriptions(), (reply_to, 1)])
            await _collect(messages, found, settle=SETTLE_SECONDS, at_most=SURVEY_SECONDS,
                           done=lambda: found.complete(name))
            node = found.nodes.get(name)
            if node is None:
                raise unknown(name, found.nodes)
            if not node.online:
                return OpResult(False, f"node {name} is offline; nothing was sent (`edge-cli "
                                "fleet` says since when)", exit_code=1)
            if key is None and not allow_unauthenticated:
                raise NotPaired(f"this machine ({me}) is not paired with node {name}: on {name} "
                                f"run `edge-cli fleet pair {me}`, then here the command it "
                                "prints (or run this as the agent's user, whose state "
                                "directory keeps its keys); nothing was sent")
            topic, payload = request_topic(name), Request(op=op, args=args).encode()
            properties = request_properties(key, topic=topic, reply_to=reply_to,
                                            correlation=correlation, caller=me, via=caller(),
                                            expiry=expiry, payload=payload)
            await client.publish(topic, payload, qos=1, retain=False, properties=properties)
            sent = True
            try:
                async with asyncio.timeout(expiry + SKEW_SECONDS):  # as long as the node may start it
                    async for message in messages:
                        if (message.topic.value == reply_to
                                and correlation_of(message.properties) == correlation
                                and (result := _answer(name, message, check)) is not None):
                            return result
            except TimeoutError:
                pass
            return no_answer(name, expiry)
    except (aiomqtt.MqttError, OSError) as exc:
        if not sent:
            raise
        return OpResult(False, f"the connection to the broker broke after the command was sent "
                        f"to node {name} ({exc}); it may or may not have run", exit_code=1)


def _answer(name: str, message: aiomqtt.Message, check: AnswerCheck) -> OpResult | None:
    """The node's result, or None for an arrival that is not the node's (not sealed by it)."""
    payload = message.payload
    try:
        answer = check(message.properties, payload if isinstance(payload, bytes) else
                       _text(message).encode())
    except ValueError as exc:
        return OpResult(False, f"node {name} answered something unreadable ({exc}); the command "
                        "may or may not have run", exit_code=1)
    if answer is None:
        return None
    result = answer.response.result()
    if not answer.authenticated:
        result.message += f" (node {name}'s answer is UNAUTHENTICATED: no key is shared with it)"
        result.data["authenticated"] = False
    return result
