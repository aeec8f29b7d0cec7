"""Home Assistant discovery: each entity's retained config against HA's documented schema for its
component, one device per node, and entities removed when a pin leaves the allowlist."""

from __future__ import annotations

import json
from contextlib import asynccontextmanager
from dataclasses import dataclass

from edge import __version__
from edge.config.loader import load_config
from edge.hardware import build_hardware
from edge.mqtt.bridge import MqttBridge
from edge.mqtt.discovery import discovery_configs
from tests.fakes.mosquitto import Watcher
from tests.helpers import until

PREFIX = "homeassistant"
BASE = "edge-agent/shed"
PINS = """
[boards.gpio.aliases]
{aliases}
[boards.gpio.pins]
{pins}
[mqtt]
url = "{url}"
node_id = "shed"
"""
ALL_PINS = dict(
    aliases='led = "GPIO17"\nfan = "GPIO18"\nbutton = "GPIO27"',
    pins='led = { mode = "output" }\nfan = { mode = "pwm" }\nbutton = { mode = "input" }')

# What Home Assistant requires of each component (the MQTT integration docs, *.mqtt pages):
# switch, light (default schema) and number need command_topic; binary_sensor and sensor need
# state_topic. Device registry entries need unique_id and device.identifiers.
REQUIRED = {"switch": {"command_topic"}, "light": {"command_topic"}, "number": {"command_topic"},
            "binary_sensor": {"state_topic"}, "sensor": {"state_topic"}}
DOCUMENTED = {
    "common": {"name", "unique_id", "availability_topic", "payload_available",
               "payload_not_available", "device", "qos"},
    "switch": {"command_topic", "state_topic", "payload_on", "payload_off", "state_on", "state_off"},
    "light": {"command_topic", "state_topic", "payload_on", "payload_off", "brightness_command_topic",
              "brightness_state_topic", "brightness_scale", "on_command_type"},
    "number": {"command_topic", "state_topic", "min", "max", "step", "mode", "unit_of_measurement"},
    "binary_sensor": {"state_topic", "payload_on", "payload_off"},
    "sensor": {"state_topic", "device_class", "unit_of_measurement", "state_class"},
}
"""Every key we send is one HA documents for the component (HA rejects unknown keys)."""
STATE_CLASSES = {"measurement", "total", "total_increasing"}


@dataclass(frozen=True)
class Reading:
    quantity: str
    value: float
    unit: str


class Greenhouse:
    """A sensor feed as the sensor hub provides one (edge.mqtt.sensors.SensorFeed)."""

    def __init__(self):
        self.listeners = []

    def describe(self):
        return {"greenhouse": {"temperature": "°C", "humidity": "%", "soil": "raw"}}

    def latest(self):
        return {"greenhouse": {"temperature": Reading("temperature", 21.5, "°C")}}

    def subscribe(self, listener):
        self.listeners.append(listener)
        return lambda: self.listeners.remove(listener)


@asynccontextmanager
async def node(broker, write_config, env, factory, pins=ALL_PINS, sensors=None):
    config = load_config(str(write_config(PINS.format(url=broker.url, **pins))), env=env).config
    hardware = build_hardware(config, resident=True, pin_factory=factory)
    await hardware.start()
    bridge = MqttBridge(config.mqtt, hardware, sensors=sensors)
    await bridge.start()
    try:
        await until(lambda: bridge.connected)
        yield bridge
    finally:
        await bridge.close()
        await hardware.shutdown()


def configs(seen: Watcher) -> dict[str, dict]:
    """The latest config per topic; an empty payload (a removal) as {}."""
    out: dict[str, dict] = {}
    for topic, payload, _ in seen.messages:
        if topic.startswith(PREFIX + "/"):
            out[topic] = json.loads(payload) if payload else {}
    return out


async def test_each_entity_meets_home_assistants_schema(broker, write_config, isolated_env,
                                                        mock_factory):
    feed = Greenhouse()
    async with Watcher(broker, f"{PREFIX}/#", f"{BASE}/#") as seen, \
            node(broker, write_config, isolated_env, mock_factory, sensors=feed):
        await seen.wait(f"{BASE}/availability", "online")
        found = configs(seen)
        assert set(found) == {f"{PREFIX}/switch/shed/led/config", f"{PREFIX}/light/shed/fan/config",
                              f"{PREFIX}/binary_sensor/shed/button/config",
                              f"{PREFIX}/sensor/shed/greenhouse_temperature/config",
                              f"{PREFIX}/sensor/shed/greenhouse_humidity/config",
                              f"{PREFIX}/sensor/shed/greenhouse_soil/config"}
        for topic, body in found.items():
            component = topic.split("/")[1]
            assert REQUIRED[component] <= set(body), topic
            assert set(body) <= DOCUMENTED["common"] | DOCUMENTED[component], topic
            assert body["availability_topic"] == f"{BASE}/availability"
            assert body["device"] == {"identifiers": ["edge-agent-shed"], "name": "shed",
                                      "manufacturer": "edge-agent", "model": "edge-agent",
                                      "sw_version": __version__}
            assert body["unique_id"].startswith("shed_")
        assert len({b["unique_id"] for b in found.values()}) == len(found)
        light = found[f"{PREFIX}/light/shed/fan/config"]
        assert light["brightness_scale"] == 100 and light["command_topic"] == f"{BASE}/fan/set"
        temperature = found[f"{PREFIX}/sensor/shed/greenhouse_temperature/config"]
        assert (temperature["device_class"], temperature["unit_of_measurement"],
                temperature["state_class"]) == ("temperature", "°C", "measurement")
        soil = found[f"{PREFIX}/sensor/shed/greenhouse_soil/config"]
        assert "device_class" not in soil and soil["unit_of_measurement"] == "raw"
        assert all(b.get("state_class", "measurement") in STATE_CLASSES for b in found.values())
        # the states the entities point at are there, retained
        assert await seen.wait(f"{BASE}/sensor/greenhouse/temperature") == b"21.5"
        feed.listeners[0]("greenhouse", Reading("humidity", 55.0, "%"))
        await seen.wait(f"{BASE}/sensor/greenhouse/humidity", "55")


async def test_servos_are_numbers_from_0_to_180(broker, write_config, isolated_env, mock_factory):
    pins = dict(aliases='arm = "GPIO18"', pins='arm = { mode = "pwm" }')
    text = PINS.format(url=broker.url, **pins) + 'servos = ["arm"]\n'  # still in [mqtt]
    config = load_config(str(write_config(text)), env=isolated_env).config
    hardware = build_hardware(config, resident=True, pin_factory=mock_factory)
    bridge = MqttBridge(config.mqtt, hardware)
    found = discovery_configs(config.mqtt, bridge.topics, bridge.pins, {})
    body = found[f"{PREFIX}/number/shed/arm/config"]
    assert (body["min"], body["max"], body["command_topic"]) == (0, 180, f"{BASE}/arm/set")
    assert set(body) <= DOCUMENTED["common"] | DOCUMENTED["number"]


async def test_a_pin_that_leaves_the_allowlist_leaves_home_assistant(broker, write_config,
                                                                     isolated_env, mock_factory):
    async with Watcher(broker, f"{PREFIX}/#") as seen:
        async with node(broker, write_config, isolated_env, mock_factory):
            await seen.wait(f"{PREFIX}/light/shed/fan/config")
        fewer = dict(aliases='led = "GPIO17"', pins='led = { mode = "output" }')
        mark = len(seen.messages)
        async with node(broker, write_config, isolated_env, mock_factory, pins=fewer):
            await seen.wait(f"{PREFIX}/light/shed/fan/config", b"", after=mark)
            await seen.wait(f"{PREFIX}/binary_sensor/shed/button/config", b"", after=mark)
            await seen.wait(f"{PREFIX}/switch/shed/led/config", after=mark)
    async with Watcher(broker, f"{PREFIX}/#") as later:  # what HA finds when it (re)starts
        await later.wait(f"{PREFIX}/switch/shed/led/config")
        assert {t for t, p, retained in later.messages if retained and p} == {
            f"{PREFIX}/switch/shed/led/config"}
