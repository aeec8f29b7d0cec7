"""The fleet on this agent's broker connection (the MQTT bridge owns the connection and hands
the fleet its messages):

- as a **node**: requests on ``<base>/request`` go to the :class:`~edge.fleet.responder.Responder`;
  the retained ``<base>/node`` describes what the node has (:func:`describe_node`);
- as a **controller**: each ``node`` board (:class:`~edge.fleet.node_board.NodeBoard`) asks
  through :meth:`FleetLink.ask`, its answers come back on ``<base>/response``, and the node's
  availability, description, states and events reach its board.

A request is asked once: when the broker goes away before the answer came, the wait ends at
once with a ConnectionError (the board says the command may not have run); it is never sent
again.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import aiomqtt
from paho.mqtt.properties import Properties
from paho.mqtt.subscribeoptions import SubscribeOptions

from edge import __version__
from edge.config.mqtt import MqttConfig
from edge.fleet.node_board import NodeBoard
from edge.fleet.protocol import (
    AwaitedAnswers,
    BoardRow,
    NodeDescription,
    PinRow,
    Request,
    Response,
    SensorRow,
    correlation_of,
    new_correlation,
    request_properties,
    request_topic,
    response_topic,
)
from edge.fleet.responder import Responder
from peripherals.base import Board, BoardStatus

if TYPE_CHECKING:
    from edge.control.ops import OpTarget
    from edge.mqtt.topics import NodePins

log = logging.getLogger(__name__)


class FleetLink:
    def __init__(self, config: MqttConfig, boards: Mapping[str, Board]):
        self.config = config
        self.base = config.topic_base
        self.request_topic = request_topic(self.base)
        self.response_topic = response_topic(self.base)
        self.nodes = [b for b in boards.values() if isinstance(b, NodeBoard)]
        self.answers = AwaitedAnswers()
        self.responder = Responder(config, self._publish_answer)
        self.counts = {"asked": 0, "answered": 0, "no_answer": 0}
        self._client: aiomqtt.Client | None = None
        for board in self.nodes:
            board.attach(self)

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

    def connected_to(self, client: aiomqtt.Client) -> None:
        self._client = client

    def lost(self, why: str) -> None:
        """The connection is gone: waiting requests end now, node boards go down."""
        self._client = None
        self.answers.fail_all(f"the broker went away before the answer came ({why})")
        for board in self.nodes:
            board.lost_broker(why)

    # messages ---------------------------------------------------------------------------------

    def on_message(self, message: aiomqtt.Message, tasks: set[asyncio.Task[None]]) -> bool:
        """Take ``message`` if it is the fleet's (True); a request runs in a task added to
        ``tasks``."""
        topic = message.topic.value
        payload = message.payload if isinstance(message.payload, bytes) else str(
            message.payload or "").encode()
        if topic == self.request_topic:
            task = asyncio.create_task(self.responder.on_request(
                payload, message.properties, bool(message.retain)), name="fleet-request")
            tasks.add(task)
            task.add_done_callback(tasks.discard)
            return True
        if topic == self.response_topic and self.nodes:
            if not self.answers.deliver(correlation_of(message.properties), payload):
                log.info("fleet_answer_unclaimed (late, repeated or not ours)")
            return True
        for board in self.nodes:
            if topic.startswith(board.topic_prefix()):
                board.on_message(topic, payload)
                return True
        return False

    # asking -----------------------------------------------------------------------------------

    async def ask(self, base: str, op: str, args: dict[str, Any], timeout: float) -> Response:
        """Ask the node at ``base`` to run ``op``; its answer. TimeoutError when none came in
        ``timeout`` seconds (the request's expiry too: it never acts later), ConnectionError
        when the broker is not there or went away meanwhile."""
        client = self._client
        if client is None:
            raise ConnectionError("this agent is not connected to the broker")
        correlation = new_correlation()
        waiting = self.answers.expect(correlation)
        props = request_properties(self.response_topic, correlation, self.config.node_id,
                                   max(1, round(timeout)))
        self.counts["asked"] += 1
        try:
            async with asyncio.timeout(timeout):
                await client.publish(request_topic(base), Request(op=op, args=args).encode(),
                                     qos=1, retain=False, properties=props)
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
        return answer

    async def _publish_answer(self, topic: str, payload: bytes, props: Properties) -> None:
        client = self._client
        if client is None:
            raise ConnectionError("not connected to the broker")
        await client.publish(topic, payload, qos=1, retain=False, properties=props)

    def status(self) -> dict[str, Any]:
        return {"requests": self.responder.status(), **self.counts,
                "nodes": {b.name: {"node_id": b.node_id, "connected": b.connected,
                                   "availability": b.availability} for b in self.nodes}}


def describe_node(config: MqttConfig, boards: Iterable[BoardStatus], pins: NodePins,
                  sensors: Mapping[str, Mapping[str, str]]) -> bytes:
    """The retained ``<base>/node``: version, boards, pins (by their names on the broker) and
    sensors (quantity -> unit)."""
    return NodeDescription(
        version=__version__, node_id=config.node_id,
        boards=[BoardRow(name=s.name, kind=s.kind, connected=s.connected) for s in boards],
        pins=[PinRow(name=slug, pin=row.spec, mode=row.pin.mode.value,
                     aliases=list(row.pin.aliases)) for slug, row in pins.by_slug.items()],
        sensors=[SensorRow(name=name, quantities=dict(quantities))
                 for name, quantities in sensors.items()]).encode()
