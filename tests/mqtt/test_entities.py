"""The recipe in edge/mqtt/README.md, followed: an entity kind written here, registered with one
line, is announced to Home Assistant, publishes its states, takes its commands through the
hardware's door, and refuses what it does not understand, with nothing else changed."""

from __future__ import annotations

import json
from typing import Any

import pytest

from edge.config.loader import load_config
from edge.hardware import build_hardware
from edge.hardware.pins import Pin
from edge.mqtt.bridge import MqttBridge
from edge.mqtt.commands import BadPayload, Command, shown
from edge.mqtt.entities import KINDS, EntityKind, Naming, kind_for, register
from edge.mqtt.topic_names import Topics
from peripherals.base import PinMode
from tests.fakes.mosquitto import Watcher
from tests.helpers import until

PREFIX, BASE = "homeassistant", "edge-agent/garden"
CONFIG = """
[boards.gpio.aliases]
valve_beds = "GPIO22"
led = "GPIO17"
[boards.gpio.pins]
valve_beds = {{ mode = "output", safe = "off" }}
led = {{ mode = "output", safe = "off" }}
[mqtt]
url = "{url}"
node_id = "garden"
"""


class Valve(EntityKind):
    """A water valve on an output pin (its alias starts with ``valve``): Home Assistant's
    ``valve`` component, opened and closed."""

    name = component = "valve"
    publishes_safe_state = True

    def claims(self, pin: Pin, naming: Naming) -> bool:
        return pin.mode is PinMode.OUTPUT and any(a.startswith("valve") for a in pin.aliases)

    def discovery(self, topics: Topics, slug: str) -> dict[str, Any]:
        return {"command_topic": topics.set(slug), "state_topic": topics.state(slug),
                "payload_open": "OPEN", "payload_close": "CLOSE",
                "state_open": "open", "state_closed": "closed"}

    def state_payloads(self, topics: Topics, slug: str, value: float) -> dict[str, str]:
        return {topics.state(slug): "open" if value > 0 else "closed"}

    def command(self, text: str) -> Command:
        if text.upper() in ("OPEN", "CLOSE"):
            return Command("write", 1.0 if text.upper() == "OPEN" else 0.0)
        raise BadPayload(f"a valve takes OPEN or CLOSE, not {shown(text)}")


@pytest.fixture
def valve_kind():
    register(Valve())  # the one line of the recipe
    yield
    del KINDS["valve"]


def test_a_kind_registered_later_is_asked_first(valve_kind):
    valve = Pin("gpio", "GPIO22", PinMode.OUTPUT, aliases=("valve_beds",))
    assert kind_for(valve, Naming()).name == "valve"
    assert kind_for(Pin("gpio", "GPIO17", PinMode.OUTPUT), Naming()).name == "switch"
    with pytest.raises(ValueError, match="registered already"):
        register(Valve())


async def test_a_new_kind_is_announced_published_and_commanded(valve_kind, broker, write_config,
                                                               isolated_env, mock_factory):
    config = load_config(str(write_config(CONFIG.format(url=broker.url))), env=isolated_env).config
    hardware = build_hardware(config, resident=True, pin_factory=mock_factory)
    await hardware.start()
    bridge = MqttBridge(config.mqtt, hardware)
    async with Watcher(broker, f"{PREFIX}/#", f"{BASE}/#") as seen:
        await bridge.start()
        try:
            await until(lambda: bridge.connected)
            await seen.wait(f"{BASE}/availability", "online")
            body = json.loads(await seen.wait(f"{PREFIX}/valve/garden/valve_beds/config"))
            assert (body["command_topic"], body["state_topic"], body["payload_open"]) == \
                (f"{BASE}/valve_beds/set", f"{BASE}/valve_beds", "OPEN")
            assert body["availability_topic"] == f"{BASE}/availability"  # the shared keys too
            await seen.wait(f"{PREFIX}/switch/garden/led/config")  # the other pins as before
            await seen.wait(f"{BASE}/valve_beds", "closed")
            await seen.publish(f"{BASE}/valve_beds/set", "OPEN")
            await seen.wait(f"{BASE}/valve_beds", "open")
            assert mock_factory.pin(22).state == 1
            await seen.publish(f"{BASE}/valve_beds/set", "ON")
            refused = json.loads(await seen.wait(f"{BASE}/refused"))
            assert refused["reason"] == "a valve takes OPEN or CLOSE, not 'ON'"
            assert mock_factory.pin(22).state == 1
        finally:
            mark = len(seen.messages)
            await bridge.close()
            await hardware.shutdown()
        await seen.wait(f"{BASE}/valve_beds", "closed", after=mark)  # its safe level, announced
        assert mock_factory.pin(22).state == 0
