"""The agent's one connection to the broker, and what rides on it: the Home Assistant publisher
(:class:`edge.mqtt.bridge.MqttBridge`) and the fleet (:class:`edge.fleet.link.FleetLink`), each
handed the connection by the runtime's assembly.

Each connection, in order: the last will (``offline`` on ``<base>/availability``, retained) is
registered; each rider subscribes what it hears (before ``online``, so whoever acts on it is
heard), then announces itself (discovery, ``online``, states). When the broker goes away every
rider is told, and the connection comes back with backoff. What riders publish meanwhile goes
through one outbox, in order, only while connected (the next connection announces the state as
it is then).

The client id is ``edge-agent-<node_id>-<random>`` (:func:`~edge.mqtt.link.client_identifier`):
a guessable one would let any client push the agent off the broker.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

import aiomqtt
from paho.mqtt.properties import Properties

from edge.config.mqtt import MqttConfig
from edge.core.supervision import SupervisedTask
from edge.mqtt.link import Backoff, client_identifier, explain, make_client
from edge.mqtt.topic_names import Topics

log = logging.getLogger(__name__)

OUTBOX_SIZE = 1000
CLOSE_TIMEOUT_SECONDS = 2.0


class Rider(Protocol):
    """What rides on the connection: told of each new client, each message and each loss."""

    async def subscribe(self, client: aiomqtt.Client) -> None:
        """Subscribe what it hears on a new connection (before ``online`` is published)."""

    async def announce(self, client: aiomqtt.Client) -> None:
        """Publish what a new connection says first (after every rider subscribed)."""

    def on_message(self, message: aiomqtt.Message) -> bool:
        """Take ``message`` (True), or leave it to the next rider."""

    def lost(self, why: str) -> None:
        """The connection is gone."""


class Interceptor(Protocol):
    def __call__(self, topic: str, payload: bytes, properties: Properties | None,
                 retained: bool) -> bool: ...


def closing() -> bool:
    """The connection's task is being cancelled (:meth:`MqttConnection.close`), even where the
    client swallowed the cancellation (a ``wait_for`` whose operation finished at the same
    moment) or raised an MqttError of its own in its place while leaving the broker."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


def iso(when: float | None) -> str | None:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(when)) if when else None


class MqttConnection:
    """``state_dir``: where the client id's random part is kept (without one, it lasts this
    process)."""

    def __init__(self, config: MqttConfig, state_dir: Path | None = None):
        self.config = config
        self.availability = Topics(config.topic_base).availability
        self.identifier = client_identifier(config.node_id, state_dir)
        self.riders: list[Rider] = []
        self._interceptors: list[Interceptor] = []
        self.connected = False
        self.since: float | None = None
        """When it last connected, or (while not connected) when it lost the broker."""
        self.last_error: str | None = None
        self.previous_error: str | None = None
        """The last time the broker was lost, and why (kept after reconnecting, for health)."""
        self.connects = 0
        self.client: aiomqtt.Client | None = None
        self._outbox: asyncio.Queue[tuple[str, bytes, bool]] = asyncio.Queue(OUTBOX_SIZE)
        self.task: SupervisedTask | None = None

    def carry(self, rider: Rider, intercept: Interceptor | None = None) -> None:
        """Add ``rider``, told of each connection in the order riders were added; ``intercept``
        takes messages as they arrive, before the client queues them
        (:func:`edge.mqtt.link.make_client`)."""
        self.riders.append(rider)
        if intercept is not None:
            self._interceptors.append(intercept)

    def start(self) -> SupervisedTask:
        """Connect in the background, with retries."""
        self.since = time.time()
        self.task = SupervisedTask("mqtt-bridge", self._run).start()
        return self.task

    def queue(self, topic: str, payload: bytes, retain: bool) -> None:
        """Publish in order while connected; dropped while not (the next connection announces the
        state as it is then)."""
        if self.client is None:
            return
        try:
            self._outbox.put_nowait((topic, payload, retain))
        except asyncio.QueueFull:
            log.warning("mqtt_outbox_full dropped_topic=%s", topic)

    async def close(self, last_words: Mapping[str, bytes]) -> None:
        """Send what is queued, then ``last_words`` (topic -> payload, as states are published),
        say ``offline`` (retained) and disconnect cleanly."""
        client = self.client
        if client is not None and self.connected:
            try:
                async with asyncio.timeout(CLOSE_TIMEOUT_SECONDS):
                    await self._outbox.join()
                    for topic, payload in last_words.items():
                        await client.publish(topic, payload, qos=self.config.qos,
                                             retain=self.config.retain)
                    await client.publish(self.availability, b"offline", qos=1, retain=True)
            except (aiomqtt.MqttError, TimeoutError) as exc:
                log.warning("mqtt_offline_not_published error=%r", str(exc))
        if self.task is not None:
            await self.task.aclose()
        self.task = None
        self.connected = False

    def _intercept(self, topic: str, payload: bytes, properties: Properties | None,
                   retained: bool) -> bool:
        return any(take(topic, payload, properties, retained) for take in self._interceptors)

    async def _run(self) -> None:
        backoff = Backoff(self.config.reconnect_max_seconds)
        while True:
            try:
                await self._session(backoff)
            except aiomqtt.MqttError as exc:
                self._lost(explain(exc, self.config))
            except OSError as exc:  # TLS files, sockets
                self._lost(explain(exc, self.config))
            except Exception as exc:  # a bug must not end the connection for the agent's lifetime
                log.exception("mqtt_session_failed")
                self._lost(f"{type(exc).__name__}: {exc}")
            finally:
                self.client = None
                for rider in self.riders:
                    rider.lost(self.last_error or "the connection closed")
            if closing():  # the client's exit raised over the cancel that ends the connection
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
        self.previous_error = f"{iso(time.time())} mqtt: {why}"
        self.client = None

    async def _session(self, backoff: Backoff) -> None:
        will = aiomqtt.Will(self.availability, b"offline", qos=1, retain=True)
        intercept = self._intercept if self._interceptors else None
        async with make_client(self.config, self.identifier, will=will,
                               intercept=intercept) as client:
            while not self._outbox.empty():  # older than what the announcement publishes
                self._outbox.get_nowait()
                self._outbox.task_done()
            self.client = client
            # subscribed before ``online``: a client that waits for it and then sends is heard
            # (what arrives meanwhile waits in ``messages`` until the announcement is out)
            for rider in self.riders:
                await rider.subscribe(client)
            for rider in self.riders:
                await rider.announce(client)
            self.connected, self.since, self.last_error = True, time.time(), None
            self.connects += 1
            backoff.reset()
            log.info("mqtt_connected url=%s node=%s base=%s commands=%s", self.config.url,
                     self.config.node_id, self.config.topic_base, self.config.allow_commands)
            if closing():  # a cancel asyncio.wait_for let pass while connecting (Python 3.11)
                raise asyncio.CancelledError
            sender = asyncio.create_task(self._send_outbox(client), name="mqtt-outbox")
            try:
                async for message in client.messages:
                    self._on_message(message)
            finally:
                sender.cancel()
                await asyncio.gather(sender, return_exceptions=True)

    def _on_message(self, message: aiomqtt.Message) -> None:
        for rider in self.riders:
            if rider.on_message(message):
                return
        log.debug("mqtt_ignored topic=%r reason=not_a_command_topic", message.topic.value)

    async def _send_outbox(self, client: aiomqtt.Client) -> None:
        """Publish what changed while connected, in order."""
        while True:
            topic, payload, retain = await self._outbox.get()
            try:
                await client.publish(topic, payload, qos=self.config.qos, retain=retain)
            finally:
                self._outbox.task_done()
