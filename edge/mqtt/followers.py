"""What the bridge follows beside the boards' own events: each sensor's availability
(``<base>/<sensor>/availability``) and the analog pins' values (boards do not report them by
themselves), each in a loop the bridge supervises; and every pin's state as the boards report
it, at each connection and when a board comes (back) up.

Both publish through the bridge's queue (``publish(topic, payload, retain)``), which drops what
comes while the broker is away: the next connection announces everything as it is then.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from edge.config.mqtt import MqttConfig
from edge.core.exc import EdgeError
from edge.core.requester import Requester
from edge.hardware import Hardware
from edge.mqtt.sensors import SensorFeed
from edge.mqtt.topic_names import Topics
from edge.mqtt.topics import NodePins, PinTopic
from peripherals.exc import BoardError

log = logging.getLogger(__name__)

SENSOR_CHECK_SECONDS = 1.0
"""How often the sensors' failures are looked for (a look at the hub's memory, no read)."""

BOARD_BACK_TRIES, BOARD_BACK_WAIT_SECONDS = 50, 0.1
"""How long a board that came back is given to have its pins claimed (5 s)."""

Publish = Callable[[str, bytes, bool], None]
"""The bridge's queue: topic, payload, retain."""


class SensorAvailability:
    """Each sensor ``online`` while its reads succeed and ``offline`` while they fail (and until
    its first reading), retained, so that Home Assistant greys a failing sensor's entities
    instead of showing its last value as if it were fresh. A reading says ``online`` at once;
    a failure is found by :meth:`watch` within :data:`SENSOR_CHECK_SECONDS`."""

    def __init__(self, sensors: SensorFeed, topics: Topics, publish: Publish):
        self.sensors, self.topics, self.publish = sensors, topics, publish
        self.said: dict[str, bool] = {}
        """What each sensor's topic says now."""

    def now(self) -> dict[str, bool]:
        """Every sensor's availability as it is now (what a new connection announces)."""
        latest = self.sensors.latest()
        self.said = {row["name"]: row["error"] is None and bool(latest.get(row["name"]))
                     for row in self.sensors.rows()}
        return dict(self.said)

    def read(self, sensor: str) -> None:
        """``sensor`` gave a reading."""
        self._say(sensor, True)

    async def watch(self, connected: Callable[[], bool]) -> None:
        while True:
            await asyncio.sleep(SENSOR_CHECK_SECONDS)
            if connected():
                for row in self.sensors.rows():
                    if row["error"] is not None:
                        self._say(row["name"], False)

    def _say(self, sensor: str, online: bool) -> None:
        if self.said.get(sensor) is online:
            return
        self.said[sensor] = online
        log.info("mqtt_sensor_availability sensor=%s online=%s", sensor, online)
        self.publish(self.topics.sensor_availability(sensor),
                     b"online" if online else b"offline", True)


class AnalogFollower:
    """Reads each analog pin every ``analog_interval_seconds`` through the hardware's door (as
    caller ``mqtt:analog``) and publishes a value that moved by more than ``analog_deadband``
    since the last one published: at most once per interval, and not for noise."""

    def __init__(self, config: MqttConfig, hardware: Hardware, pins: list[PinTopic],
                 topics: Topics, publish: Publish):
        self.config, self.hardware, self.pins = config, hardware, pins
        self.topics, self.publish = topics, publish
        self.sent: dict[str, float] = {}
        """Each pin's value last published (by slug)."""
        self.requester = Requester("mqtt", "analog")

    async def follow(self, connected: Callable[[], bool]) -> None:
        while True:
            await asyncio.sleep(self.config.analog_interval_seconds)
            if connected():
                for row in self.pins:
                    await self._read(row)

    async def _read(self, row: PinTopic) -> None:
        try:
            _, value = await self.hardware.read(row.spec, self.requester)
        except (EdgeError, BoardError) as exc:  # a board down: the health and events say so
            log.debug("mqtt_analog_unread pin=%s error=%r", row.slug, str(exc))
            return
        last = self.sent.get(row.slug)
        if last is not None and abs(value - last) <= self.config.analog_deadband:
            return
        self.sent[row.slug] = value
        for topic, payload in row.state_payloads(self.topics, value).items():
            self.publish(topic, payload.encode(), self.config.retain)


class PinStates:
    """Each published pin's state as the boards report it now: what a connection announces,
    and what a board that comes (back) up publishes once its pins are claimed (a board down
    when the node was announced had none to announce; Home Assistant showed them unknown)."""

    def __init__(self, config: MqttConfig, hardware: Hardware, pins: NodePins, topics: Topics,
                 publish: Publish, analog_sent: dict[str, float]):
        self.config, self.hardware, self.pins = config, hardware, pins
        self.topics, self.publish, self.analog_sent = topics, publish, analog_sent

    def now(self, only: str | None = None) -> tuple[dict[str, str], int]:
        """Topic -> payload for each published pin of the boards (or of board ``only``), and
        how many pins that is. An analog pin's value counts as published."""
        states: dict[str, str] = {}
        found = 0
        for board in self.hardware.status():
            if only is not None and board.name != only:
                continue
            for pin in board.pins:
                row = self.pins.by_pin.get((board.name, pin.name))
                if row is not None:
                    found += 1
                    states |= row.state_payloads(self.topics, pin.value)
                    if row.kind.name == "analog":
                        self.analog_sent[row.slug] = pin.value
        return states, found

    async def board_back(self, board: str) -> None:
        """Publish ``board``'s pins once the hardware has claimed them (the claims follow the
        board's ``up`` within moments; after 5 s, what is there)."""
        wanted = sum(1 for row in self.pins.by_slug.values() if row.pin.board == board)
        for _ in range(BOARD_BACK_TRIES):
            states, found = self.now(board)
            if found >= wanted:
                break
            await asyncio.sleep(BOARD_BACK_WAIT_SECONDS)
        for topic, payload in states.items():
            self.publish(topic, payload.encode(), self.config.retain)
