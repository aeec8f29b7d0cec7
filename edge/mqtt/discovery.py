"""Home Assistant MQTT discovery: one retained config per entity under
``<discovery_prefix>/<component>/<node_id>/<object_id>/config``, all on one HA device per node.

A pin is discovered as its entity kind says (:mod:`edge.mqtt.entities`: component and keys);
sensor readings are ``sensor``s (with ``device_class``, ``unit_of_measurement`` and
``state_class``). Every entity names ``<base>/availability``, so HA greys it out when the agent
is offline. Keys follow Home Assistant's documented schema for each component;
``tests/mqtt/test_discovery.py`` pins them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from edge import __version__
from edge.config.mqtt import MqttConfig
from edge.mqtt.topics import NodePins, PinTopic, Topics, slugify

MODEL = "edge-agent"

DEVICE_CLASSES = {
    # quantity -> (HA sensor device_class, the units HA accepts for it)
    "temperature": ("temperature", {"°C", "°F", "K"}),
    "humidity": ("humidity", {"%"}),
    "pressure": ("pressure", {"Pa", "hPa", "kPa", "bar", "mbar", "mmHg", "inHg", "psi"}),
    "illuminance": ("illuminance", {"lx"}),
    "light": ("illuminance", {"lx"}),
    "voltage": ("voltage", {"V", "mV"}),
    "current": ("current", {"A", "mA"}),
    "power": ("power", {"W", "kW"}),
    "energy": ("energy", {"Wh", "kWh"}),
    "co2": ("carbon_dioxide", {"ppm"}),
    "carbon_dioxide": ("carbon_dioxide", {"ppm"}),
    "pm25": ("pm25", {"µg/m³"}),
    "distance": ("distance", {"mm", "cm", "m", "km"}),
    "moisture": ("moisture", {"%"}),
    "soil_moisture": ("moisture", {"%"}),
}
"""A device_class is only claimed when the unit is one HA accepts for it (HA rejects the entity
otherwise); any other reading is a plain measurement with its unit."""


def config_topic(cfg: MqttConfig, component: str, object_id: str) -> str:
    return f"{cfg.discovery_prefix}/{component}/{cfg.node_id}/{object_id}/config"


def sweep_subscription(cfg: MqttConfig) -> str:
    """Every config this node may have announced before, to find the ones to remove."""
    return f"{cfg.discovery_prefix}/+/{cfg.node_id}/+/config"


def device(cfg: MqttConfig) -> dict[str, Any]:
    return {"identifiers": [f"edge-agent-{cfg.node_id}"], "name": cfg.node_id,
            "manufacturer": "edge-agent", "model": MODEL, "sw_version": __version__}


def _common(cfg: MqttConfig, topics: Topics, object_id: str, name: str) -> dict[str, Any]:
    return {"name": name, "unique_id": f"{cfg.node_id}_{object_id}",
            "availability_topic": topics.availability,
            "payload_available": "online", "payload_not_available": "offline",
            "device": device(cfg), "qos": cfg.qos}


def pin_config(cfg: MqttConfig, topics: Topics, row: PinTopic) -> dict[str, Any]:
    return _common(cfg, topics, row.slug, row.slug) | row.kind.discovery(topics, row.slug)


def sensor_config(cfg: MqttConfig, topics: Topics, sensor: str, quantity: str,
                  unit: str) -> dict[str, Any]:
    object_id = f"{slugify(sensor)}_{slugify(quantity)}"
    body = _common(cfg, topics, object_id, f"{sensor} {quantity}")
    body |= {"state_topic": topics.sensor(sensor, quantity), "state_class": "measurement"}
    if unit:
        body["unit_of_measurement"] = unit
    device_class, units = DEVICE_CLASSES.get(quantity.lower(), ("", set()))
    if device_class and unit in units:
        body["device_class"] = device_class
    return body


def discovery_configs(cfg: MqttConfig, topics: Topics, pins: NodePins,
                      sensors: Mapping[str, Mapping[str, str]]) -> dict[str, dict[str, Any]]:
    """Config topic -> payload for every entity this node has now (none when discovery is off)."""
    if not cfg.discovery:
        return {}
    configs = {config_topic(cfg, row.kind.component, row.slug): pin_config(cfg, topics, row)
               for row in pins.by_slug.values()}
    for sensor, quantities in sensors.items():
        for quantity, unit in quantities.items():
            object_id = f"{slugify(sensor)}_{slugify(quantity)}"
            configs[config_topic(cfg, "sensor", object_id)] = sensor_config(
                cfg, topics, sensor, quantity, unit)
    return configs
