"""The bridge between the hardware (and sensors) and the broker; see :mod:`edge.mqtt` for topics.

Each connection, in order: the last will (``offline``, retained) is registered; retained discovery
configs of this node that are no longer current are removed (empty retained payload); the
command topics are subscribed (unless ``allow_commands = false``) and the chat topic; then
discovery, ``online``, every pin's state, the sensors' latest readings and the health are
published, so whoever acts on ``online`` is heard. When the broker goes away
the bridge reconnects with backoff and publishes all of it again.

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

The fleet (:mod:`edge.fleet`) rides on the same connection: requests from other agents on
``edge-agent/_fleet/<node_id>/request`` (subscribed whatever ``allow_commands`` says: reads are answered, actuations
refused when it is false) run through the runtime's control operations once it hands them over
(:meth:`MqttBridge.serve_requests`); the retained ``<base>/node`` describes the node; this
agent's ``node`` boards are asked through it and hear their nodes' topics.

The client id is ``edge-agent-<node_id>-<random>`` (:func:`~edge.mqtt.link.client_identifier`):
a guessable one would let any client push the agent off the broker.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import aiomqtt

from edge import __version__
from edge.config.mqtt import EXPOSURE_FIX, MqttConfig
from edge.core.exc import EdgeError
from edge.core.requester import Requester
from edge.core.supervision import SupervisedTask, close_all
from edge.fleet.keys import FleetKeys
from edge.fleet.link import FleetLink, describe_node
from edge.fleet.protocol import node_topic
from edge.hardware import Hardware
from edge.mqtt.cameras import CameraFeed
from edge.mqtt.commands import carry_out, parse_command, shown
from edge.mqtt.discovery import REFUSED_EVENT, discovery_configs, sweep_stale
from edge.mqtt.followers import AnalogFollower, PinStates, SensorAvailability
from edge.mqtt.link import Backoff, client_identifier, explain, make_client
from edge.mqtt.sensors import Reading, SensorFeed
from edge.mqtt.topics import NodePins, Topics
from peripherals.base import BoardEvent
from peripherals.exc import BoardError

if TYPE_CHECKING:
    from edge.control.ops import OpTarget

log = logging.getLogger(__name__)

OUTBOX_SIZE = 1000
CHAT_INBOX_SIZE = 100
CLOSE_TIMEOUT_SECONDS = 2.0
REPORTED_EVENTS = frozenset({"input", "watchdog", "down", "up"})


def _warning(config: MqttConfig) -> str | None:
    """What status says of commands anyone on the broker can send (None: nothing)."""
    return f"{config.exposure}; {EXPOSURE_FIX}" if config.exposure else None


def _closing() -> bool:
    """The bridge's task is being cancelled (:meth:`MqttBridge.close`), even where the client
    swallowed the cancellation (a ``wait_for`` whose operation finished at the same moment) or
    raised an MqttError of its own in its place while leaving the broker."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


def _iso(when: float | None) -> str | None:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(when)) if when else None


class MqttBridge:
    def __init__(self, config: MqttConfig, hardware: Hardware, *, sensors: SensorFeed | None = None,
                 state_dir: Path | None = None, cameras: CameraFeed | None = None):
        """``state_dir``: where the client id's random part is kept (without one, it lasts
        this process); ``cameras``: each one's pictures are published as they are taken."""
        self.config = config
        self.hardware = hardware
        self.sensors = sensors
        self.cameras = cameras
        self.topics = Topics(config.topic_base)
        self.pins = NodePins.build(hardware.pin_list(), config.servos, hardware.locate,
                                   config.inputs)
        self.identifier = client_identifier(config.node_id, state_dir)
        self.fleet = FleetLink(config, hardware.boards, FleetKeys.of(config.fleet_keys, state_dir))
        """Requests from other agents, and this agent's ``node`` boards (:mod:`edge.fleet`)."""
        self.connected = False
        self.since: float | None = None
        """When the bridge last connected, or (while not connected) when it lost the broker."""
        self.last_error: str | None = None
        self.previous_error: str | None = None
        """The last time the broker was lost, and why (kept after reconnecting, for health)."""
        self.counts = {"connects": 0, "commands": 0, "refused": 0, "ignored": 0}
        self.started_at = time.time()
        self._client: aiomqtt.Client | None = None
        self._outbox: asyncio.Queue[tuple[str, bytes, bool]] = asyncio.Queue(OUTBOX_SIZE)
        self._task: SupervisedTask | None = None
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

    # lifecycle -------------------------------------------------------------------------------

    async def start(self) -> None:
        """Watch the hardware and the sensors, and connect (in the background, with retries)."""
        self._unsubscribe.append(self.hardware.subscribe(self._on_board_event))
        if self.sensors is not None:
            self._unsubscribe.append(self.sensors.subscribe(self._on_reading))
        if self.cameras is not None:
            self._unsubscribe.append(self.cameras.subscribe(self._on_picture))
        self.since = time.time()
        self._task = SupervisedTask("mqtt-bridge", self._run).start()
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
        self.fleet.serve(target)

    def supervised_tasks(self) -> list[SupervisedTask]:
        """The connection loop and the loops beside it (the health's refresh, the sensors'
        availability, the analog pins' values): a bug that escapes one is logged, and it starts
        again."""
        return ([self._task] if self._task is not None else []) + self._timers

    async def close(self) -> None:
        """Take no more commands, send what is queued, publish the safe level each output is
        about to be driven to (the agent's shutdown comes next), say ``offline`` (retained) and
        disconnect cleanly."""
        await close_all(self._timers)
        self._timers.clear()
        for task in self._commands:
            task.cancel()
        await asyncio.gather(*self._commands, return_exceptions=True)
        await self.fleet.close()
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe.clear()
        client = self._client
        if client is not None and self.connected:
            try:
                async with asyncio.timeout(CLOSE_TIMEOUT_SECONDS):
                    await self._outbox.join()
                    for topic, payload in self._safe_states().items():
                        await client.publish(topic, payload.encode(), qos=self.config.qos,
                                             retain=self.config.retain)
                    await client.publish(self.topics.availability, b"offline", qos=1, retain=True)
            except (aiomqtt.MqttError, TimeoutError) as exc:
                log.warning("mqtt_offline_not_published error=%r", str(exc))
        if self._task is not None:
            await self._task.aclose()
        self._task = None
        self.connected = False

    def _safe_states(self) -> dict[str, str]:
        states: dict[str, str] = {}
        for row in self.pins.by_slug.values():
            if row.pin.safe is not None and row.kind.publishes_safe_state:
                states |= row.state_payloads(self.topics, float(row.pin.safe))
        return states

    def status(self) -> dict[str, Any]:
        return {"enabled": True, "url": self.config.url, "node_id": self.config.node_id,
                "base_topic": self.topics.base, "connected": self.connected,
                "since": _iso(self.since), "last_error": self.last_error,
                "commands_allowed": self.config.allow_commands,
                "warning": _warning(self.config), **self.counts, "fleet": self.fleet.status()}

    # the connection --------------------------------------------------------------------------

    async def _run(self) -> None:
        backoff = Backoff(self.config.reconnect_max_seconds)
        while True:
            try:
                await self._session(backoff)
            except aiomqtt.MqttError as exc:
                self._lost(explain(exc, self.config))
            except OSError as exc:  # TLS files, sockets
                self._lost(explain(exc, self.config))
            except Exception as exc:  # a bug must not end the bridge for the agent's lifetime
                log.exception("mqtt_session_failed")
                self._lost(f"{type(exc).__name__}: {exc}")
            finally:
                self._client = None
                self.fleet.lost(self.last_error or "the connection closed")
            if _closing():  # the client's exit raised over the cancel that ends the bridge
                raise asyncio.CancelledError
            delay = backoff.next_delay()
            log.info("mqtt_reconnect_in seconds=%g", delay)
            await asyncio.sleep(delay)

    def _lost(self, why: str) -> None:
        if self.connected or self.last_error != why:
            log.warning("mqtt_disconnected url=%s error=%r", self.config.url, why)
        if self.connected:
            self.since = time.time()
        self.connected = False
        self.last_error = why
        self.previous_error = f"{_iso(time.time())} mqtt: {why}"
        self._client = None

    async def _session(self, backoff: Backoff) -> None:
        will = aiomqtt.Will(self.topics.availability, b"offline", qos=1, retain=True)
        async with make_client(self.config, self.identifier, will=will,
                               intercept=self.fleet.intercept) as client:
            while not self._outbox.empty():  # older than what the announcement publishes
                self._outbox.get_nowait()
                self._outbox.task_done()
            self._client = client
            messages = client.messages
            await sweep_stale(client, messages, self.config, self.topics, set(self._discovery()))
            # subscribed before ``online``: a client that waits for it and then sends is heard
            # (what arrives meanwhile waits in ``messages`` until the announcement is out)
            if self.config.allow_commands and self.pins.by_slug:
                await client.subscribe(self._command_subscriptions())
            if self.chat_inbox is not None:
                await client.subscribe(self.topics.chat, qos=self.config.qos)
            await self.fleet.subscribe(client)
            self.fleet.connected_to(client)
            await self._announce(client)
            self.connected, self.since, self.last_error = True, time.time(), None
            self.counts["connects"] += 1
            backoff.reset()
            log.info("mqtt_connected url=%s node=%s base=%s commands=%s", self.config.url,
                     self.config.node_id, self.topics.base, self.config.allow_commands)
            if _closing():  # a cancel asyncio.wait_for let pass while connecting (Python 3.11)
                raise asyncio.CancelledError
            sender = asyncio.create_task(self._send_outbox(client), name="mqtt-outbox")
            try:
                async for message in messages:
                    self._on_message(message)
            finally:
                sender.cancel()
                await asyncio.gather(sender, return_exceptions=True)

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

    async def _announce(self, client: aiomqtt.Client) -> None:
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
        return self.connected

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
                           "connects": self.counts["connects"],
                           "last_error": down[0] if down else self.previous_error}).encode()

    async def _send_outbox(self, client: aiomqtt.Client) -> None:
        """Publish what changed while connected, in order."""
        while True:
            topic, payload, retain = await self._outbox.get()
            try:
                await client.publish(topic, payload, qos=self.config.qos, retain=retain)
            finally:
                self._outbox.task_done()

    def _queue(self, topic: str, payload: bytes, retain: bool) -> None:
        if self._client is None:
            return  # the next connection publishes the state as it is then
        try:
            self._outbox.put_nowait((topic, payload, retain))
        except asyncio.QueueFull:
            log.warning("mqtt_outbox_full dropped_topic=%s", topic)

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
        if event.kind == "up" and self._client is not None:
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

    def _on_message(self, message: aiomqtt.Message) -> None:
        if self.fleet.on_message(message):
            return
        topic = message.topic.value
        slug = ("chat" if topic == self.topics.chat
                else self.topics.command_slug(topic, self.pins.by_slug))
        if slug is None:  # not subscribed: another spelling of a pin finds nothing
            log.debug("mqtt_ignored topic=%r reason=not_a_command_topic", topic)
            return
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
        client = self._client
        if client is None or not self.connected:
            raise aiomqtt.MqttError("not connected to the broker")
        await client.publish(self.topics.chat_reply, text.encode(), qos=self.config.qos)

    def _refuse(self, slug: str, topic: str, command: str, reason: str) -> None:
        self.counts["refused"] += 1
        log.warning("mqtt_refused topic=%r command=%s reason=%r", topic, shown(command), reason)
        body = {"event_type": REFUSED_EVENT, "pin": slug, "command": command[:80],
                "reason": reason, "topic": topic}
        self._queue(self.topics.refused, json.dumps(body).encode(), False)

