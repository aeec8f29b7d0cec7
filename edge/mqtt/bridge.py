"""The Home Assistant publisher: the hardware (and sensors, cameras) on the broker; see
:mod:`edge.mqtt` for topics. It rides on the agent's connection (:mod:`edge.mqtt.connection`),
as Home Assistant keeps its ``client.py`` apart from its entity platforms.

On each connection: retained discovery configs of this node that are no longer current are
removed (empty retained payload); the command topics are subscribed (unless ``allow_commands =
false``) and the chat topic; then discovery, the retained ``<base>/node`` (what the node has, for
the fleet), ``online``, every pin's state, the sensors' latest readings and the health are
published, so whoever acts on ``online`` is heard; the connection does it all again after it
comes back.

Beside the connection, supervised loops (``mqtt-health``, ``mqtt-sensors``, ``mqtt-analog``)
refresh the retained health every ``health_interval_seconds``, turn a failing sensor's
availability ``offline``, and publish the analog pins' values as they move
(:mod:`edge.mqtt.followers`).

The command topics are exactly the published ones, ``<base>/<slug>/set``: a pin's other
spellings (``GPIO17``, ``17``, ``BOARD11``, ``gpio:GPIO17``) are not subscribed and are ignored
if they come, so each pin is one caller on the broker. A command runs through the hardware's
door as ``Requester("mqtt", <topic>)``, where the caller's rate limit and the pin's own budget of
switches apply; what the door refuses (wrong mode, rate limit, the pin's budget, readonly, a
down board) is logged and published on ``<base>/refused`` as ``{"pin", "command", "reason"}``.
A retained command is ignored unless ``accept_retained_commands``: a ``/set`` left on the broker
must not act again after a restart.

The fleet (:mod:`edge.fleet`) rides on the same connection, handed it by the assembly: requests
from other agents on ``edge-agent/_fleet/<node_id>/request`` run through the runtime's control
operations once it hands them over (:meth:`MqttBridge.serve_requests`); this agent's ``node``
boards are asked through it. The bridge shows its figures in status.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Iterable, Mapping
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import aiomqtt

from edge import __version__
from edge.config.mqtt import EXPOSURE_FIX, MqttConfig
from edge.core.exc import EdgeError
from edge.core.requester import Requester
from edge.core.supervision import SupervisedTask, close_all
from edge.fleet.protocol import BoardRow, NodeDescription, PinRow, SensorRow, node_topic
from edge.hardware import Hardware
from edge.mqtt.cameras import CameraFeed
from edge.mqtt.commands import carry_out, shown
from edge.mqtt.connection import MqttConnection, iso
from edge.mqtt.discovery import REFUSED_EVENT, discovery_configs, sweep_stale
from edge.mqtt.entities import parse_command
from edge.mqtt.followers import AnalogFollower, PinStates, SensorAvailability
from edge.mqtt.sensors import Reading, SensorFeed
from edge.mqtt.topic_names import Topics
from edge.mqtt.topics import NodePins
from peripherals.base import BoardEvent, BoardStatus
from peripherals.exc import BoardError

if TYPE_CHECKING:
    from edge.control.ops import OpTarget
    from edge.fleet.link import FleetLink

log = logging.getLogger(__name__)

CHAT_INBOX_SIZE = 100
REPORTED_EVENTS = frozenset({"input", "watchdog", "down", "up"})


def _warning(config: MqttConfig) -> str | None:
    """What status says of commands anyone on the broker can send (None: nothing)."""
    return f"{config.exposure}; {EXPOSURE_FIX}" if config.exposure else None


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


class MqttBridge:
    def __init__(self, config: MqttConfig, hardware: Hardware, *, sensors: SensorFeed | None = None,
                 state_dir: Path | None = None, cameras: CameraFeed | None = None,
                 connection: MqttConnection | None = None, fleet: FleetLink | None = None):
        """``connection``: the agent's (the assembly's, which hands it to the fleet too);
        without one, the bridge's own, its client id kept in ``state_dir``; ``cameras``: each
        one's pictures are published as they are taken; ``fleet``: shown in status, and given
        the runtime's operations by :meth:`serve_requests`."""
        self.config = config
        self.hardware = hardware
        self.sensors = sensors
        self.cameras = cameras
        self.topics = Topics(config.topic_base)
        shown_by_sensors = sensors.pins_read() if sensors is not None else frozenset()
        self.pins = NodePins.build([pin for pin in hardware.pin_list()
                                    if f"{pin.board}:{pin.pin}" not in shown_by_sensors],
                                   config.servos, hardware.locate, config.inputs)
        self.connection = connection or MqttConnection(config, state_dir)
        self.connection.carry(self)
        self.identifier = self.connection.identifier
        self.fleet = fleet
        """Requests from other agents, and this agent's ``node`` boards (:mod:`edge.fleet`)."""
        self.counts = {"commands": 0, "refused": 0, "ignored": 0}
        self.started_at = time.time()
        self._queue = self.connection.queue
        self._timers: list[SupervisedTask] = []
        self._availability = (SensorAvailability(sensors, self.topics, self._queue)
                              if sensors is not None else None)
        self._analog = AnalogFollower(config, hardware, [
            row for row in self.pins.by_slug.values() if row.kind.name == "analog"],
            self.topics, self._queue)
        self._states = PinStates(config, hardware, self.pins, self.topics, self._queue,
                                 self._analog.sent)
        self._commands: set[asyncio.Task[None]] = set()
        self._pin_locks: dict[str, asyncio.Lock] = {}
        """One per pin name: a pin's commands act in the order they came (a slider's last
        value wins)."""
        self._unsubscribe: list[Any] = []
        self.chat_inbox: asyncio.Queue[str] | None = (
            asyncio.Queue(CHAT_INBOX_SIZE) if config.chat and config.allow_commands else None)
        """Prompts from ``<base>/chat`` for the chat channel (:mod:`edge.channels.mqtt`)."""

    @property
    def connected(self) -> bool:
        return self.connection.connected

    @property
    def last_error(self) -> str | None:
        return self.connection.last_error

    # lifecycle -------------------------------------------------------------------------------

    async def start(self) -> None:
        """Watch the hardware and the sensors, and connect (in the background, with retries)."""
        self._unsubscribe.append(self.hardware.subscribe(self._on_board_event))
        if self.sensors is not None:
            self._unsubscribe.append(self.sensors.subscribe(self._on_reading))
        if self.cameras is not None:
            self._unsubscribe.append(self.cameras.subscribe(self._on_picture))
        self.connection.start()
        self._timers = [SupervisedTask("mqtt-health", self._refresh_health).start()]
        if self._availability is not None:
            self._timers.append(SupervisedTask(
                "mqtt-sensors", partial(self._availability.watch, self._is_connected)).start())
        if self._analog.pins:
            self._timers.append(SupervisedTask(
                "mqtt-analog", partial(self._analog.follow, self._is_connected)).start())

    def serve_requests(self, target: OpTarget) -> None:
        """Answer requests on ``edge-agent/_fleet/<node_id>/request`` (other agents, ``edge-cli --node``) by running
        them on ``target``, the runtime's control operations; until then they are refused."""
        if self.fleet is not None:
            self.fleet.serve(target)

    def supervised_tasks(self) -> list[SupervisedTask]:
        """The connection loop and the loops beside it (the health's refresh, the sensors'
        availability, the analog pins' values): a bug that escapes one is logged, and it starts
        again."""
        task = self.connection.task
        return ([task] if task is not None else []) + self._timers

    async def close(self) -> None:
        """Take no more commands, send what is queued, publish the safe level each output is
        about to be driven to (the agent's shutdown comes next), say ``offline`` (retained) and
        disconnect cleanly."""
        await close_all(self._timers)
        self._timers.clear()
        for task in self._commands:
            task.cancel()
        await asyncio.gather(*self._commands, return_exceptions=True)
        if self.fleet is not None:
            await self.fleet.close()
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe.clear()
        await self.connection.close({topic: payload.encode()
                                     for topic, payload in self._safe_states().items()})

    def _safe_states(self) -> dict[str, str]:
        states: dict[str, str] = {}
        for row in self.pins.by_slug.values():
            if row.pin.safe is not None and row.kind.publishes_safe_state:
                states |= row.state_payloads(self.topics, float(row.pin.safe))
        return states

    def status(self) -> dict[str, Any]:
        link = self.connection
        fleet = {"fleet": self.fleet.status()} if self.fleet is not None else {}
        return {"enabled": True, "url": self.config.url, "node_id": self.config.node_id,
                "base_topic": self.topics.base, "connected": link.connected,
                "since": iso(link.since), "last_error": link.last_error,
                "commands_allowed": self.config.allow_commands,
                "warning": _warning(self.config), "connects": link.connects, **self.counts,
                **fleet}

    # on each connection ------------------------------------------------------------------------

    async def subscribe(self, client: aiomqtt.Client) -> None:
        await sweep_stale(client, client.messages, self.config, self.topics, set(self._discovery()))
        if self.config.allow_commands and self.pins.by_slug:
            await client.subscribe(self._command_subscriptions())
        if self.chat_inbox is not None:
            await client.subscribe(self.topics.chat, qos=self.config.qos)

    def lost(self, why: str) -> None:
        """The connection tells it; the next one announces the states as they are then."""

    def _command_subscriptions(self) -> list[tuple[str, int]]:
        """Each published pin's ``<base>/<slug>/set``, and nothing else: the pin's other
        spellings are never delivered."""
        qos: int = self.config.qos
        return [(self.topics.set(slug), qos) for slug in self.pins.by_slug]

    def _discovery(self) -> dict[str, dict[str, Any]]:
        described = self.sensors.describe(present=True) if self.sensors is not None else {}
        kinds = ({row["name"]: row["kind"] for row in self.sensors.rows()}
                 if self.sensors is not None else {})
        cameras = self.cameras.names if self.cameras is not None else ()
        return discovery_configs(self.config, self.topics, self.pins, described, kinds, cameras)

    async def announce(self, client: aiomqtt.Client) -> None:
        """Discovery, ``online``, then every state as it is now, the sensors and the health."""
        for topic, body in self._discovery().items():
            await client.publish(topic, json.dumps(body).encode(), qos=1, retain=True)
        await client.publish(node_topic(self.topics.base), self._description(), qos=1, retain=True)
        await client.publish(self.topics.availability, b"online", qos=1, retain=True)
        for topic, payload in self._current_states().items():
            await client.publish(topic, payload.encode(), qos=self.config.qos,
                                 retain=self.config.retain)
        available = self._availability.now() if self._availability is not None else {}
        for sensor, online in available.items():
            await client.publish(self.topics.sensor_availability(sensor),
                                 b"online" if online else b"offline", qos=1, retain=True)
        await client.publish(self.topics.health, self._health(), qos=self.config.qos, retain=True)

    def _current_states(self) -> dict[str, str]:
        self._analog.sent.clear()
        states, _ = self._states.now()
        latest = self.sensors.latest() if self.sensors is not None else {}
        for sensor, readings in latest.items():
            for reading in readings.values():
                states[self.topics.sensor(sensor, reading.quantity)] = f"{reading.value:g}"
        return states

    def _is_connected(self) -> bool:
        return self.connection.connected

    async def _refresh_health(self) -> None:
        """The retained health every ``health_interval_seconds`` while connected, whatever else
        is published (its uptime would freeze behind a sensor polled more often)."""
        while True:
            await asyncio.sleep(self.config.health_interval_seconds)
            self._queue(self.topics.health, self._health(), True)

    def _description(self) -> bytes:
        described = self.sensors.describe(present=True) if self.sensors is not None else {}
        return describe_node(self.config, self.hardware.status(), self.pins, described)

    def _health(self) -> bytes:
        """Also ``last_error``: a board that is down and why, else when and why the broker
        was last lost (None: neither), for ``edge-cli fleet``."""
        statuses = self.hardware.status()
        boards = {s.name: s.connected for s in statuses}
        down = [f"board {s.name}: {s.detail or 'not connected'}" for s in statuses
                if not s.connected]
        return json.dumps({"version": __version__, "node_id": self.config.node_id,
                           "time": round(time.time(), 1),
                           "uptime_seconds": round(time.time() - self.started_at, 1),
                           "boards": boards, "boards_connected": sum(boards.values()),
                           "connects": self.connection.connects,
                           "last_error": down[0] if down else self.connection.previous_error}).encode()

    # what happens on the node ----------------------------------------------------------------

    def _on_board_event(self, event: BoardEvent) -> None:
        row = self.pins.by_pin.get((event.board, event.pin or ""))
        if event.kind in ("output", "input") and row is not None and event.value is not None:
            for topic, payload in row.state_payloads(self.topics, event.value).items():
                self._queue(topic, payload.encode(), self.config.retain)
        if event.kind in REPORTED_EVENTS:
            self._queue(self.topics.events, json.dumps(
                {"time": round(time.time(), 3), "board": event.board, "kind": event.kind,
                 "pin": row.slug if row else event.pin, "value": event.value}).encode(), False)
        if event.kind in ("down", "up"):
            self._queue(self.topics.health, self._health(), True)
            self._queue(node_topic(self.topics.base), self._description(), True)
        if event.kind == "up" and self.connection.client is not None:
            task = asyncio.create_task(self._states.board_back(event.board),
                                       name=f"mqtt-up-{event.board}")
            self._commands.add(task)
            task.add_done_callback(self._commands.discard)

    def _on_reading(self, sensor: str, reading: Reading) -> None:
        if self._availability is not None:
            self._availability.read(sensor)
        self._queue(self.topics.sensor(sensor, reading.quantity), f"{reading.value:g}".encode(),
                    self.config.retain)

    def _on_picture(self, camera: str, jpeg: bytes) -> None:
        self._queue(self.topics.camera(camera), jpeg, self.config.retain)

    # commands --------------------------------------------------------------------------------

    def on_message(self, message: aiomqtt.Message) -> bool:
        """A command or a prompt on this node's topics (False: not the bridge's; another
        spelling of a pin finds nothing, as it is not subscribed)."""
        topic = message.topic.value
        slug = ("chat" if topic == self.topics.chat
                else self.topics.command_slug(topic, self.pins.by_slug))
        if slug is None:
            return False
        self._on_command(message, topic, slug)
        return True

    def _on_command(self, message: aiomqtt.Message, topic: str, slug: str) -> None:
        payload = message.payload if isinstance(message.payload, bytes) else str(message.payload).encode()
        if message.retain and not self.config.accept_retained_commands:
            self.counts["ignored"] += 1
            log.warning("mqtt_retained_command_ignored topic=%r (set [mqtt] "
                        "accept_retained_commands = true to act on them)", topic)
            return
        if len(payload) > self.config.max_payload_bytes:
            self._refuse(slug, topic, f"<{len(payload)} bytes>",
                         f"payload too large ({len(payload)} bytes; at most "
                         f"{self.config.max_payload_bytes}, [mqtt] max_payload_bytes)")
            return
        if topic == self.topics.chat:
            self._on_prompt(topic, payload)
            return
        task = asyncio.create_task(self._command(slug, topic, payload), name=f"mqtt-{slug}")
        self._commands.add(task)
        task.add_done_callback(self._commands.discard)

    async def _command(self, slug: str, topic: str, payload: bytes) -> None:
        self.counts["commands"] += 1
        row = self.pins.by_slug[slug]
        text = payload.decode("utf-8", "replace").strip()
        try:
            command = parse_command(row.kind, payload)
            async with self._pin_locks.setdefault(slug, asyncio.Lock()):
                await carry_out(self.hardware, row.spec, command, Requester("mqtt", topic))
        except (EdgeError, BoardError) as exc:  # PolicyDenied, BadPayload, a board down
            self._refuse(slug, topic, text, str(exc))

    def _on_prompt(self, topic: str, payload: bytes) -> None:
        try:
            text = payload.decode("utf-8").strip()
        except UnicodeDecodeError:
            self._refuse("chat", topic, repr(payload[:20]), "the payload is not UTF-8 text")
            return
        if not text or self.chat_inbox is None:
            return
        try:
            self.chat_inbox.put_nowait(text)
        except asyncio.QueueFull:
            self._refuse("chat", topic, text, f"{CHAT_INBOX_SIZE} prompts are waiting already")

    @property
    def chat_topic(self) -> str:
        """``<base>/chat``: where prompts come from, and who sent them (``mqtt:<base>/chat``)."""
        return self.topics.chat

    async def publish_reply(self, text: str) -> None:
        """An answer to ``<base>/chat``, on ``<base>/chat/reply``; raises MqttError when the
        broker is not there (the channel's outbox tries again)."""
        client = self.connection.client
        if client is None or not self.connected:
            raise aiomqtt.MqttError("not connected to the broker")
        await client.publish(self.topics.chat_reply, text.encode(), qos=self.config.qos)

    def _refuse(self, slug: str, topic: str, command: str, reason: str) -> None:
        self.counts["refused"] += 1
        log.warning("mqtt_refused topic=%r command=%s reason=%r", topic, shown(command), reason)
        body = {"event_type": REFUSED_EVENT, "pin": slug, "command": command[:80],
                "reason": reason, "topic": topic}
        self._queue(self.topics.refused, json.dumps(body).encode(), False)

