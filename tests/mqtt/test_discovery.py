"""Home Assistant discovery: each entity's retained config against HA's documented schema for its
component, one device per node, and entities removed when a pin leaves the allowlist."""

from __future__ import annotations

import json
import re
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from edge import __version__
from edge.config.loader import load_config
from edge.config.mqtt import MqttConfig
from edge.hardware import build_hardware
from edge.mqtt.bridge import MqttBridge
from edge.mqtt.discovery import discovery_configs, sensor_config
from edge.mqtt.topic_names import Topics
from edge.sensors import DriverMeasure, SensorHub, SensorState
from peripherals.sensors.pi_health import PiHealthSensor
from tests.fakes.mosquitto import Watcher
from tests.helpers import until
from tests.mqtt.feeds import Feed

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
# state_topic; event needs state_topic and event_types. Device registry entries need unique_id
# and device.identifiers.
REQUIRED = {"switch": {"command_topic"}, "light": {"command_topic"}, "number": {"command_topic"},
            "binary_sensor": {"state_topic"}, "sensor": {"state_topic"},
            "event": {"state_topic", "event_types"}}
DOCUMENTED = {
    "common": {"name", "unique_id", "availability_topic", "payload_available",
               "payload_not_available", "availability", "availability_mode", "device", "qos",
               "entity_category"},
    "switch": {"command_topic", "state_topic", "payload_on", "payload_off", "state_on", "state_off"},
    "light": {"command_topic", "state_topic", "payload_on", "payload_off", "brightness_command_topic",
              "brightness_state_topic", "brightness_scale", "on_command_type"},
    "number": {"command_topic", "state_topic", "min", "max", "step", "mode", "unit_of_measurement"},
    "binary_sensor": {"state_topic", "payload_on", "payload_off", "device_class"},
    "sensor": {"state_topic", "device_class", "unit_of_measurement", "state_class"},
    "event": {"state_topic", "event_types", "device_class"},
}
"""Every key we send is one HA documents for the component (HA rejects unknown keys)."""
STATE_CLASSES = {"measurement", "total", "total_increasing"}
ALLOWED_STATE_CLASSES = {
    # homeassistant/components/sensor/const.py, DEVICE_CLASS_STATE_CLASSES, for the classes we
    # claim: a meter (energy, gas, water, volume) is a total, never a measurement
    "energy": {"total", "total_increasing"}, "gas": {"total", "total_increasing"},
    "water": {"total", "total_increasing"}, "volume": {"total", "total_increasing"},
    "temperature": {"measurement"}, "humidity": {"measurement"}, "pressure": {"measurement"},
    "illuminance": {"measurement"}, "voltage": {"measurement"}, "current": {"measurement"},
    "power": {"measurement"}, "carbon_dioxide": {"measurement"}, "pm25": {"measurement"},
    "moisture": {"measurement"}, "distance": STATE_CLASSES, "volume_flow_rate": {"measurement"},
}
BINARY_SENSOR_CLASSES = {  # BinarySensorDeviceClass
    "battery", "battery_charging", "carbon_monoxide", "cold", "connectivity", "door",
    "garage_door", "gas", "heat", "light", "lock", "moisture", "motion", "moving", "occupancy",
    "opening", "plug", "power", "presence", "problem", "running", "safety", "smoke", "sound",
    "tamper", "update", "vibration", "window"}
ENTITY_CATEGORIES = {"config", "diagnostic"}


def meets_home_assistants_schema(topic: str, body: dict, node: str) -> None:
    """What HA checks of a discovery payload, and what it warns about."""
    component = topic.split("/")[1]
    assert REQUIRED[component] <= set(body), topic
    assert set(body) <= DOCUMENTED["common"] | DOCUMENTED[component], (
        topic, set(body) - DOCUMENTED["common"] - DOCUMENTED[component])
    # availability_topic and availability are exclusive; the list takes {topic} items
    assert ("availability_topic" in body) != ("availability" in body), topic
    for item in body.get("availability", []):
        assert set(item) <= {"topic", "payload_available", "payload_not_available"}
    assert body.get("availability_mode", "all") in ("all", "any", "latest")
    assert body["device"]["identifiers"] and body["unique_id"].startswith(node + "_")
    name = body["name"]
    assert name is None or (isinstance(name, str) and name and "_" not in name), (topic, name)
    # HA composes the device's name and the entity's; it warns about (and cuts) an entity name
    # that is the device's name or begins with it (mqtt/entity.py _set_entity_name)
    assert name is None or not (name == node or name.startswith(node)), (topic, name)
    assert name is None or not name.lower().startswith(node.lower() + " "), (topic, name)
    shown = f"{node} {name}" if name else node  # what HA shows: the device's name, the entity's
    assert not re.search(r"\b(\w+) \1\b", shown, re.I), (topic, shown)  # no word said twice
    assert body.get("entity_category", "diagnostic") in ENTITY_CATEGORIES
    if component == "sensor":
        assert body.get("entity_category") != "config"  # HA refuses config sensors
        device_class = body.get("device_class")
        if device_class is not None:
            allowed = ALLOWED_STATE_CLASSES[device_class]
            assert body.get("state_class") in allowed, (topic, device_class, body.get("state_class"))
        assert body.get("state_class", "measurement") in STATE_CLASSES
    if component == "binary_sensor" and "device_class" in body:
        assert body["device_class"] in BINARY_SENSOR_CLASSES, topic
        assert "state_class" not in body and "unit_of_measurement" not in body
    if component == "event":
        assert isinstance(body["event_types"], list) and body["event_types"], topic
        assert all(isinstance(t, str) for t in body["event_types"])
        assert body.get("device_class", "button") in ("button", "doorbell", "motion")


def greenhouse() -> Feed:
    return Feed({"greenhouse": {"temperature": "°C", "humidity": "%", "soil": "raw"}})


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
    feed = greenhouse()
    feed.read("greenhouse", "temperature", 21.5)
    async with Watcher(broker, f"{PREFIX}/#", f"{BASE}/#") as seen, \
            node(broker, write_config, isolated_env, mock_factory, sensors=feed):
        await seen.wait(f"{BASE}/availability", "online")
        found = configs(seen)
        assert set(found) == {f"{PREFIX}/switch/shed/led/config", f"{PREFIX}/light/shed/fan/config",
                              f"{PREFIX}/binary_sensor/shed/button/config",
                              f"{PREFIX}/sensor/shed/greenhouse_temperature/config",
                              f"{PREFIX}/sensor/shed/greenhouse_humidity/config",
                              f"{PREFIX}/sensor/shed/greenhouse_soil/config",
                              f"{PREFIX}/event/shed/refused/config"}
        for topic, body in found.items():
            meets_home_assistants_schema(topic, body, "shed")
            assert body["device"] == {"identifiers": ["edge-agent-shed"], "name": "shed",
                                      "manufacturer": "edge-agent", "model": "edge-agent",
                                      "sw_version": __version__}
        assert len({b["unique_id"] for b in found.values()}) == len(found)
        light = found[f"{PREFIX}/light/shed/fan/config"]
        assert light["brightness_scale"] == 100 and light["command_topic"] == f"{BASE}/fan/set"
        assert light["availability_topic"] == f"{BASE}/availability"
        temperature = found[f"{PREFIX}/sensor/shed/greenhouse_temperature/config"]
        assert (temperature["device_class"], temperature["unit_of_measurement"],
                temperature["state_class"]) == ("temperature", "°C", "measurement")
        soil = found[f"{PREFIX}/sensor/shed/greenhouse_soil/config"]
        assert "device_class" not in soil and soil["unit_of_measurement"] == "raw"
        # the states the entities point at are there, retained
        assert await seen.wait(f"{BASE}/sensor/greenhouse/temperature") == b"21.5"
        feed.read("greenhouse", "humidity", 55.0)
        await seen.wait(f"{BASE}/sensor/greenhouse/humidity", "55")


@pytest.mark.parametrize("quantity, unit, device_class, state_class", [
    ("energy", "kWh", "energy", "total_increasing"),
    ("energy", "Wh", "energy", "total_increasing"),
    ("gas", "m³", "gas", "total_increasing"),
    ("water", "L", "water", "total_increasing"),
    ("volume", "L", "volume", "total_increasing"),
    ("power", "W", "power", "measurement"),
    ("temperature", "°C", "temperature", "measurement"),
    ("energy", "raw", None, "measurement"),  # a unit HA does not take for energy: no class
])
def test_the_state_class_follows_the_device_class(quantity, unit, device_class, state_class):
    """Energy was ``measurement``, which HA logs as impossible and the Energy dashboard
    refuses: a meter that counts up is ``total_increasing``."""
    cfg = MqttConfig(url="mqtt://broker.lan", node_id="meter")
    component, body = sensor_config(cfg, Topics("edge-agent/meter"), "mains", quantity, unit)
    assert component == "sensor"
    assert (body.get("device_class"), body["state_class"]) == (device_class, state_class)
    meets_home_assistants_schema(f"{PREFIX}/sensor/meter/mains_{quantity}/config", body, "meter")


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
        await later.wait(f"{PREFIX}/event/shed/refused/config")  # retained, in any order
        assert {t for t, p, retained in later.messages if retained and p} == {
            f"{PREFIX}/switch/shed/led/config", f"{PREFIX}/event/shed/refused/config"}


def pi_root(folder: Path, *, thermal: bool) -> Path:
    """A fake /sys and /proc: load and memory always; the CPU temperature when ``thermal``."""
    files = {"proc/loadavg": "0.52 0.58 0.59 1/389 12345\n",
             "proc/meminfo": "MemTotal: 3884328 kB\nMemAvailable: 2913246 kB\n"}
    if thermal:
        files["sys/class/thermal/thermal_zone0/temp"] = "48312\n"
    for relative, text in files.items():
        (folder / relative).parent.mkdir(parents=True, exist_ok=True)
        (folder / relative).write_text(text)
    return folder


def pi_hub(root: Path) -> SensorHub:
    sensor = PiHealthSensor("pi", root=root, vcgencmd=None)
    return SensorHub([SensorState("pi", "pi", DriverMeasure(sensor), 0.2)])


async def test_what_this_machine_cannot_read_is_not_announced_and_old_configs_go(
        broker, write_config, isolated_env, mock_factory, tmp_path):
    """The Pi's health on a machine without a thermal zone or throttling flags announces load,
    disk and memory only; what an earlier run announced for the rest (a CPU temperature, the
    flags as numeric sensors, as before the flags were binary_sensors) is removed."""
    stale = [f"{PREFIX}/sensor/shed/pi_cpu_temperature/config",
             f"{PREFIX}/sensor/shed/pi_under_voltage/config"]
    async with Watcher(broker, f"{PREFIX}/#") as seen:
        for topic in stale:  # left on the broker by an earlier version, or another machine
            await seen.publish(topic, json.dumps({"name": "old", "state_topic": "x"}), retain=True)
        hub = pi_hub(pi_root(tmp_path / "root", thermal=False))
        mark = len(seen.messages)
        async with node(broker, write_config, isolated_env, mock_factory, sensors=hub):
            for topic in stale:
                await seen.wait(topic, b"", after=mark)
            await seen.wait(f"{PREFIX}/sensor/shed/pi_memory_used/config", after=mark)
        found = {t: b for t, b in configs(seen).items() if b and "/pi_" in t}
        assert {t.split("/")[3] for t in found} == {
            "pi_load_1m", "pi_load_5m", "pi_load_15m", "pi_disk_used", "pi_memory_used"}
        for topic, body in found.items():
            meets_home_assistants_schema(topic, body, "shed")
            assert body["entity_category"] == "diagnostic"


async def test_an_analog_pin_a_sensor_reads_is_one_entity_the_sensor_s(write_config,
                                                                      isolated_env):
    """A [sensors.NAME] on an analog pin is announced once, scaled (``soil_moisture``); the pin
    it reads gets no raw entity of its own, while an analog pin no sensor reads keeps one."""
    from edge.automation.assembly import build_sensor_hub

    text = """
[boards.uno]
type = "arduino"
port = "/dev/ttyACM0"
simulate = true
aliases = { soil = "A0", knob = "A1" }
[boards.uno.pins]
soil = { mode = "analog" }
knob = { mode = "analog" }
[sensors.bed]
type = "analog"
pin = "uno:soil"
quantity = "moisture"
unit = "%"
scale = 100
[mqtt]
url = "mqtt://broker.lan"
node_id = "shed"
"""
    config = load_config(str(write_config(text)), env=isolated_env).config
    hardware = build_hardware(config, resident=True)
    hub = build_sensor_hub(config, hardware)
    bridge = MqttBridge(config.mqtt, hardware, sensors=hub)
    found = discovery_configs(config.mqtt, bridge.topics, bridge.pins, hub.describe(present=True))
    sensors = sorted(topic for topic in found if topic.startswith(f"{PREFIX}/sensor/"))
    assert sensors == [f"{PREFIX}/sensor/shed/bed_moisture/config",
                       f"{PREFIX}/sensor/shed/knob/config"]
    assert found[f"{PREFIX}/sensor/shed/bed_moisture/config"]["unit_of_measurement"] == "%"
    assert "soil" not in bridge.pins.by_slug and "knob" in bridge.pins.by_slug
