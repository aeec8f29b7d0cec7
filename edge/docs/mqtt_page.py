"""``docs/reference/mqtt.md``: a node's topics (from :class:`edge.mqtt.topic_names.Topics`), the
entity kind of each pin (:data:`edge.mqtt.entities.KINDS`) and, for an example node, every Home
Assistant discovery config the bridge publishes (:func:`edge.mqtt.discovery.discovery_configs`)."""

from __future__ import annotations

import inspect
from typing import Any

from edge.config.mqtt import MqttConfig
from edge.hardware.pins import Pin
from edge.mqtt.discovery import discovery_configs
from edge.mqtt.entities import KINDS
from edge.mqtt.topic_names import Topics
from edge.mqtt.topics import NodePins
from edge.ops.reference import cell
from peripherals.base import PinMode, Pull

NODE = "greenhouse"
PLACEHOLDERS = {"slug": "PIN", "sensor": "SENSOR", "quantity": "QUANTITY", "camera": "CAMERA"}
EXAMPLE_PINS = (
    Pin("gpio", "GPIO22", PinMode.OUTPUT, safe=False, aliases=("pump",)),
    Pin("gpio", "GPIO23", PinMode.OUTPUT, safe=False, aliases=("fan",), active_low=True),
    Pin("gpio", "GPIO5", PinMode.INPUT, pull=Pull.UP, aliases=("door",)),
    Pin("uno", "D9", PinMode.PWM, aliases=("lamp",)),
    Pin("uno", "D10", PinMode.PWM, aliases=("vent",)),
    Pin("uno", "A0", PinMode.ANALOG, aliases=("knob",)),
)
EXAMPLE_SERVOS = ("vent",)
EXAMPLE_SENSORS = {"greenhouse": ({"temperature": "°C", "humidity": "%", "pressure": "hPa"}, "bme280"),
                   "pi": ({"cpu_temperature": "°C", "under_voltage": ""}, "pi")}
EXAMPLE_CAMERAS = ("door_cam",)


def markdown() -> str:
    cfg = MqttConfig(url="mqtts://broker.lan", node_id=NODE)
    topics = Topics(f"edge-agent/{NODE}")
    lines = ["# MQTT topics and Home Assistant entities", "",
             f"A node's topics live under its base topic (`[mqtt] base_topic`, default "
             f"`edge-agent/<node_id>`; here node `{NODE}`). How to set it up: "
             "[MQTT and Home Assistant](../how-to/home-assistant.md).", "",
             "## Topics", "", "| topic | what |", "|---|---|"]
    lines += [f"| `{topic}` | {cell(words)} |" for topic, words in topic_rows(topics)]
    lines += ["", "## Entity kinds", "",
              "Each allowlisted pin is one entity, of the first kind that claims it (a servo is a "
              "PWM pin named in `[mqtt] servos`).", "",
              "| kind | Home Assistant component | what |", "|---|---|---|"]
    lines += [f"| `{kind.name}` | `{kind.component}` | {cell(doc_line(type(kind)))} |"
              for kind in reversed(KINDS.values())]
    pins = NodePins.build(EXAMPLE_PINS, EXAMPLE_SERVOS)
    sensors = {name: quantities for name, (quantities, _) in EXAMPLE_SENSORS.items()}
    kinds = {name: kind for name, (_, kind) in EXAMPLE_SENSORS.items()}
    configs = discovery_configs(cfg, topics, pins, sensors, kinds, EXAMPLE_CAMERAS)
    lines += ["", "## Discovery, for an example node", "",
              f"Node `{NODE}` with a pump and a fan relay, a door contact, a lamp and a vent servo "
              "on PWM pins, a knob on an analog pin, a BME280 called `greenhouse`, the Pi's health "
              "and a camera: each retained config the bridge publishes "
              f"(`[mqtt] discovery_prefix`, default `{cfg.discovery_prefix}`).", "",
              "| config topic | name | state | command | device class |", "|---|---|---|---|---|"]
    for topic, body in configs.items():
        lines.append(f"| `{topic}` | {body.get('name') or ''} | {code(state_of(body))} | "
                     f"{code(body.get('command_topic'))} | {code(body.get('device_class'))} |")
    return "\n".join(lines) + "\n"


def topic_rows(topics: Topics) -> list[tuple[str, str]]:
    """(topic, its docstring) for each topic :class:`Topics` names, placeholders for its arguments."""
    rows = []
    for name, member in vars(Topics).items():
        if name.startswith("_"):
            continue
        if isinstance(member, property) and member.fget is not None:
            rows.append((member.fget(topics), doc_line(member.fget)))
        elif inspect.isfunction(member) and member.__annotations__.get("return") == "str":
            params = list(inspect.signature(member).parameters)[1:]
            rows.append((member(topics, *(PLACEHOLDERS[p] for p in params)), doc_line(member)))
    return rows


def state_of(body: dict[str, Any]) -> Any:
    return body.get("state_topic") or body.get("image_topic")


def code(value: Any) -> str:
    return f"`{value}`" if value else ""


def doc_line(thing: Any) -> str:
    doc = thing.__doc__
    return " ".join(inspect.cleandoc(doc).split("\n\n")[0].split()) if doc else ""
