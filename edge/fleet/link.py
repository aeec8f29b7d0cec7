"""The fleet on this agent's broker connection (:class:`edge.mqtt.connection.MqttConnection`,
which the runtime's assembly hands it, with this agent's ``node`` boards):

- as a **node**: requests on ``edge-agent/_fleet/<node_id>/request`` go to the :class:`~edge.fleet.responder.Responder`,
  which drops what is not sealed with a paired key before any work; the retained ``<base>/node``
  describes what the node has (the Home Assistant publisher's, :func:`edge.mqtt.bridge.describe_node`);
- as a **controller**: each ``node`` board (:class:`~edge.fleet.node_board.NodeBoard`) asks
  through :meth:`FleetLink.ask`, sealed with the key shared with that node; its answers come
  back on this agent's own answer topic (``edge-agent/_fleet/<node_id>/response``), taken only
  when sealed by that node; and the node's availability, description, states and events reach
  its board.

A request is asked once: when the broker goes away before the answer came, the wait ends at
once with a ConnectionError (the board says the command may not have run); it is never sent
again.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import aiomqtt
from paho.mqtt.properties import Properties
from paho.mqtt.subscribeoptions import SubscribeOptions

from edge.config.mqtt import MqttConfig
from edge.fleet.envelope import (
    SKEW_SECONDS,
    answer_check,
    correlation_of,
    reply_topic,
    request_properties,
)
from edge.fleet.keys import FleetKeys
from edge.fleet.node_board import NodeBoard
from edge.fleet.protocol import (
    Answer,
    AwaitedAnswers,
    Request,
    new_correlation,
    request_topic,
)
from edge.fleet.responder import Responder

if TYPE_CHECKING:
    from edge.control.ops import OpTarget

log = logging.getLogger(__name__)


class FleetLink:
    def __init__(self, config: MqttConfig, keys: FleetKeys, nodes: Iterable[NodeBoard] = ()):
        """``nodes``: this agent's ``node`` boards, which the assembly gives this link as their
        asker (:meth:`NodeBoard.attach`)."""
        self.config = config
        self.keys = keys
        self.base = config.topic_base
        self.request_topic = request_topic(config.node_id)
        self.response_topic = reply_topic(config.node_id)
        self.nodes = list(nodes)
        self.answers = AwaitedAnswers()
        self.responder = Responder(config, self._publish_answer, keys, self.request_topic)
        self.counts = {"asked": 0, "answered": 0, "no_answer": 0}
        self._requests: set[asyncio.Task[None]] = set()
        """Requests being run (a reference each, until done)."""
        self.clock_offsets: dict[str, int] = {}
        """Each node's clock minus ours (ms), from its last sealed answer."""
        self._client: aiomqtt.Client | None = None

    def serve(self, target: OpTarget) -> None:
        """Answer requests by running them on ``target`` (the runtime)."""
        self.responder.serve(target)

    @property
    def connected(self) -> bool:
        return self._client is not None

    # the connection ---------------------------------------------------------------------------

    async def subscribe(self, client: aiomqtt.Client) -> None:
        """Subscribe the fleet's topics on a new connection (before ``online`` is published)."""
        # retain-as-published: a retained request is seen as one even when it arrives live
        await client.subscribe(self.request_topic,
                               options=SubscribeOptions(qos=1, retainAsPublished=True))
        if self.nodes:
            await client.subscribe(self.response_topic, qos=1)
            # no-local: this agent's own requests to a node are not echoed back to it
            heard = SubscribeOptions(qos=1, noLocal=True)
            await client.subscribe([(f"{board.base}/{leaf}", heard) for board in self.nodes
                                    for leaf in ("+", "+/duty")])
        self._client = client

    async def announce(self, client: aiomqtt.Client) -> None:
        """Nothing: the node's description is the Home Assistant publisher's to announce."""

    async def close(self) -> None:
        """Stop the requests being run (the agent is stopping)."""
        for task in self._requests:
            task.cancel()
        await asyncio.gather(*self._requests, return_exceptions=True)

    def lost(self, why: str) -> None:
        """The connection is gone: waiting requests end now, node boards go down."""
        self._client = None
        self.answers.fail_all(f"the broker went away before the answer came ({why})")
        for board in self.nodes:
            board.lost_broker(why)

    # messages ---------------------------------------------------------------------------------

    def intercept(self, topic: str, payload: bytes, properties: Properties | None,
                  retained: bool) -> bool:
        """Take a request to this node or an answer to this agent as it arrives, before the
        connection queues it (:func:`edge.mqtt.link.make_client`): what a stranger floods is
        dropped by a cheap check and never delays the agent's own messages. True when taken."""
        if topic == self.request_topic:
            work = self.responder.admit(payload or b"", properties, retained)
            if work is not None:
                task = asyncio.create_task(work(), name="fleet-request")
                self._requests.add(task)
                task.add_done_callback(self._requests.discard)
            return True
        if topic == self.response_topic and self.nodes:
            if not self.answers.deliver(correlation_of(properties), payload or b"", properties):
                log.debug("fleet_answer_unclaimed (late, repeated, forged or not ours)")
            return True
        return False

    def on_message(self, message: aiomqtt.Message) -> bool:
        """Take ``message`` if it is from a node this agent has as a board (True)."""
        topic = message.topic.value
        payload = message.payload if isinstance(message.payload, bytes) else str(
            message.payload or "").encode()
        for board in self.nodes:
            if topic.startswith(board.topic_prefix()):
                board.on_message(topic, payload)
                return True
        return False

    # asking -----------------------------------------------------------------------------------

    async def ask(self, node_id: str, op: str, args: dict[str, Any], timeout: float) -> Answer:
        """Ask the node ``node_id`` to run ``op``, sealed with the key shared with
        it; its answer, sealed by it. TimeoutError when none came in ``timeout`` seconds (the
        request's expiry too: it never acts later), ConnectionError when the broker is not
        there or went away meanwhile, or the node was never paired with this agent."""
        client = self._client
        if client is None:
            raise ConnectionError("this agent is not connected to the broker")
        key = self.keys.get(node_id)
        if key is None and not self.config.allow_unauthenticated:
            raise ConnectionError(
                f"this agent is not paired with node {node_id}: on {node_id} run `edge-cli fleet "
                f"pair {self.config.node_id}`, then here the command it prints")
        correlation = new_correlation()
        waiting = self.answers.expect(correlation, answer_check(
            key, topic=self.response_topic, node=node_id))
        topic, payload = request_topic(node_id), Request(op=op, args=args).encode()
        props = request_properties(key, topic=topic, reply_to=self.response_topic,
                                   correlation=correlation, caller=self.config.node_id,
                                   via="agent", expiry=max(1, round(timeout)), payload=payload)
        self.counts["asked"] += 1
        try:
            async with asyncio.timeout(timeout + SKEW_SECONDS):  # as long as the node may start it
                await client.publish(topic, payload, qos=1, retain=False, properties=props)
                answer = await waiting
        except TimeoutError:
            self.counts["no_answer"] += 1
            raise
        except aiomqtt.MqttError as exc:
            self.counts["no_answer"] += 1
            raise ConnectionError(f"the request could not be sent ({exc})") from None
        finally:
            self.answers.forget(correlation)
        self.counts["answered"] += 1
        if answer.clock_offset_ms is not None:
            self.clock_offsets[node_id] = answer.clock_offset_ms
        return answer

    async def _publish_answer(self, topic: str, payload: bytes, props: Properties) -> None:
        client = self._client
        if client is None:
            raise ConnectionError("not connected to the broker")
        await client.publish(topic, payload, qos=1, retain=False, properties=props)

    def status(self) -> dict[str, Any]:
        """The fleet's figures, and each node board with its pairing and the clocks' offset
        (``clock_warning`` beyond what a request's expiry allows)."""
        nodes = {}
        for board in self.nodes:
            offset = self.clock_offsets.get(board.node_id)
            nodes[board.name] = {
                "node_id": board.node_id, "connected": board.connected,
                "availability": board.availability,
                "paired": self.keys.get(board.node_id) is not None,
                "clock_offset_ms": offset,
                "clock_warning": offset is not None and abs(offset) > SKEW_SECONDS * 1000}
        return {"requests": self.responder.status(), **self.counts,
                "forged_answers": self.answers.forged, "nodes": nodes}

