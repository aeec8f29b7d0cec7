"""Home Assistant MQTT discovery: one retained config per entity under
``<discovery_prefix>/<component>/<node_id>/<object_id>/config``, all on one HA device per node.

A pin is discovered as its entity kind says (:mod:`edge.mqtt.entities`: component and keys);
a sensor's quantity as :mod:`edge.mqtt.presentation` says (a ``sensor`` with its
``device_class``, unit and ``state_class``, or a ``binary_sensor`` flag). Every entity is
unavailable while the agent is offline (``<base>/availability``); a sensor's entities also while
the sensor's reads fail (``<base>/<sensor>/availability``, both required: ``availability_mode:
all``). Refused commands are an ``event`` entity on ``<base>/refused``; each camera an ``image``
entity (:mod:`edge.mqtt.cameras`).

Names are words, and never begin with the node's name: Home Assistant shows each entity as the
device's name and then the entity's, so a sensor named after its node (``greenhouse`` on node
``greenhouse``) gives ``Temperature``, shown as "greenhouse Temperature".

>>> entity_name("greenhouse", "greenhouse", words="temperature")
'Temperature'
>>> entity_name("shed", "pi", words="CPU temperature"), entity_name("shed", "water_pump")
('pi CPU temperature', 'water pump')
>>> entity_name("shed", "energy", words="energy"), entity_name("shed", "soil_moisture", words="moisture")
('energy', 'soil moisture')

Keys follow Home Assistant's documented schema for each component;
``tests/mqtt/test_discovery.py`` pins them.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import AsyncIterator, Collection, Mapping
from typing import TYPE_CHECKING, Any

from edge import __version__
from edge.config.mqtt import MqttConfig
from edge.mqtt.cameras import COMPONENT as IMAGE
from edge.mqtt.cameras import CONTENT_TYPE, camera_object_id
from edge.mqtt.presentation import present
from edge.mqtt.topic_names import Topics, slugify
from edge.mqtt.topics import NodePins, PinTopic

if TYPE_CHECKING:
    import aiomqtt

log = logging.getLogger(__name__)

MODEL = "edge-agent"
SWEEP_TIMEOUT_SECONDS = 2.0
REFUSED_OBJECT_ID = "refused"
REFUSED_EVENT = "refused"
"""The one event type of the ``refused`` event entity (what each ``<base>/refused`` says)."""


def config_topic(cfg: MqttConfig, component: str, object_id: str) -> str:
    return f"{cfg.discovery_prefix}/{component}/{cfg.node_id}/{object_id}/config"


def sweep_subscription(cfg: MqttConfig) -> str:
    """Every config this node may have announced before, to find the ones to remove."""
    return f"{cfg.discovery_prefix}/+/{cfg.node_id}/+/config"


def device(cfg: MqttConfig) -> dict[str, Any]:
    return {"identifiers": [f"edge-agent-{cfg.node_id}"], "name": cfg.node_id,
            "manufacturer": "edge-agent", "model": MODEL, "sw_version": __version__}


def _spoken(name: str) -> str:
    return " ".join(name.replace("_", " ").replace("-", " ").split())


def entity_name(node_id: str, *names: str, words: str = "") -> str | None:
    """The entity's name: ``names`` (a pin's, a sensor's) spoken (``water_pump``: ``water
    pump``), then ``words`` as they are, without a first word (or words) that repeat the node's
    name: Home Assistant puts the device's name before it. None (the device's own name) when
    nothing else is left."""
    said = [p for p in map(_spoken, names) if p]
    if said and words.lower().split()[:1] == said[-1].lower().split()[-1:]:
        words = words.split(" ", 1)[1] if " " in words else ""  # sensor "energy": its energy
    name = " ".join(p for p in [*said, words] if p)
    node = _spoken(node_id).lower()
    if name.lower() in (node, node_id.lower()):
        return None
    if node and name.lower().startswith(node + " "):
        name = name[len(node) + 1:]
        name = name[:1].upper() + name[1:]
    if name.startswith(node_id):  # a word that only begins like it (``pipe`` on node ``pi``):
        name = name[:1].swapcase() + name[1:]  # HA would cut the node's name off it
    return name


def common_keys(cfg: MqttConfig, topics: Topics, object_id: str, name: str | None) -> dict[str, Any]:
    return {"name": name, "unique_id": f"{cfg.node_id}_{object_id}",
            "availability_topic": topics.availability,
            "payload_available": "online", "payload_not_available": "offline",
            "device": device(cfg), "qos": cfg.qos}


def pin_config(cfg: MqttConfig, topics: Topics, row: PinTopic) -> dict[str, Any]:
    return (common_keys(cfg, topics, row.slug, entity_name(cfg.node_id, row.slug))
            | row.kind.discovery(topics, row.slug) | row.discovery())


def sensor_object_id(sensor: str, quantity: str) -> str:
    return f"{slugify(sensor)}_{slugify(quantity)}"


def sensor_config(cfg: MqttConfig, topics: Topics, sensor: str, quantity: str, unit: str,
                  kind: str = "") -> tuple[str, dict[str, Any]]:
    """(component, config) of one quantity of a sensor of type ``kind``."""
    shown = present(kind, quantity, unit)
    body = common_keys(cfg, topics, sensor_object_id(sensor, quantity),
                   entity_name(cfg.node_id, sensor, words=shown.words))
    del body["availability_topic"], body["payload_available"], body["payload_not_available"]
    body |= {"availability": [{"topic": topics.availability},
                              {"topic": topics.sensor_availability(sensor)}],
             "availability_mode": "all",
             "state_topic": topics.sensor(sensor, quantity), **shown.keys}
    return shown.component, body


def refused_config(cfg: MqttConfig, topics: Topics) -> dict[str, Any]:
    """The ``event`` entity each refused command fires (``{"event_type": "refused", "pin",
    "command", "reason", "topic"}`` on ``<base>/refused``)."""
    return (common_keys(cfg, topics, REFUSED_OBJECT_ID, "Refused command")
            | {"state_topic": topics.refused, "event_types": [REFUSED_EVENT]})


def image_config(cfg: MqttConfig, topics: Topics, camera: str) -> dict[str, Any]:
    """Camera ``camera``'s ``image`` entity: each picture, raw JPEG bytes on its topic.

    >>> body = image_config(MqttConfig(url="mqtt://broker", node_id="shed"), Topics("edge/shed"),
    ...                     "door")
    >>> body["image_topic"], body["content_type"], body["name"], body["unique_id"]
    ('edge/shed/camera/door', 'image/jpeg', 'door', 'shed_camera_door')
    """
    return (common_keys(cfg, topics, camera_object_id(camera), entity_name(cfg.node_id, camera))
            | {"image_topic": topics.camera(camera), "content_type": CONTENT_TYPE})


def discovery_configs(cfg: MqttConfig, topics: Topics, pins: NodePins,
                      sensors: Mapping[str, Mapping[str, str]],
                      kinds: Mapping[str, str] | None = None,
                      cameras: Collection[str] = ()) -> dict[str, dict[str, Any]]:
    """Config topic -> payload for every entity this node has now (none when discovery is off).
    ``sensors``: sensor -> quantity -> unit; ``kinds``: sensor -> its type (``pi``); ``cameras``:
    their names (an ``image`` entity each, :mod:`edge.mqtt.cameras`)."""
    if not cfg.discovery:
        return {}
    configs = {config_topic(cfg, row.kind.component, row.slug): pin_config(cfg, topics, row)
               for row in pins.by_slug.values()}
    for sensor, quantities in sensors.items():
        for quantity, unit in quantities.items():
            component, body = sensor_config(cfg, topics, sensor, quantity, unit,
                                            (kinds or {}).get(sensor, ""))
            configs[config_topic(cfg, component, sensor_object_id(sensor, quantity))] = body
    for camera in cameras:
        configs[config_topic(cfg, IMAGE, camera_object_id(camera))] = image_config(cfg, topics, camera)
    if cfg.allow_commands:
        configs[config_topic(cfg, "event", REFUSED_OBJECT_ID)] = refused_config(cfg, topics)
    return configs


async def sweep_stale(client: aiomqtt.Client, messages: AsyncIterator[aiomqtt.Message],
                      cfg: MqttConfig, topics: Topics, current: set[str]) -> None:
    """Remove this node's retained discovery configs that are not ``current`` (a pin that left
    the allowlist, a quantity this machine cannot read, an entity whose component changed) with
    an empty retained payload. The retained configs arrive after the subscription; a marker
    published after it comes back behind them."""
    marker = f"{topics.base}/sync/{secrets.token_hex(4)}"
    await client.subscribe(sweep_subscription(cfg), qos=1)
    await client.subscribe(marker, qos=1)
    await client.publish(marker, b"", qos=1)
    stale: list[str] = []
    try:
        async with asyncio.timeout(SWEEP_TIMEOUT_SECONDS):
            async for message in messages:
                topic = message.topic.value
                if topic == marker:
                    break
                if message.retain and message.payload and topic not in current:
                    stale.append(topic)
    except TimeoutError:
        log.warning("mqtt_discovery_sweep_incomplete seconds=%g", SWEEP_TIMEOUT_SECONDS)
    await client.unsubscribe([sweep_subscription(cfg), marker])
    for topic in stale:
        await client.publish(topic, b"", qos=1, retain=True)
        log.info("mqtt_discovery_removed topic=%s", topic)
