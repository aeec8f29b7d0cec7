"""Interlocks at the MQTT door (a real Mosquitto): a command that would break one is refused on
``<base>/refused`` with the interlock's words, and the pin does not change."""

from __future__ import annotations

import json

from edge.automation.assembly import Automation
from edge.config.loader import load_config
from edge.hardware import build_hardware
from edge.mqtt.bridge import MqttBridge
from tests.fakes.mosquitto import Watcher
from tests.helpers import asker, until

BASE = "edge-agent/kitchen"
CONFIG = """
[boards.gpio.aliases]
heater = "GPIO17"
cooler = "GPIO22"
[boards.gpio.pins]
heater = {{ mode = "output", safe = "off" }}
cooler = {{ mode = "output", safe = "off" }}
[mqtt]
url = "{url}"
node_id = "kitchen"

[[interlocks]]
name = "heat-or-cool"
exclusive = ["heater", "cooler"]
"""


async def test_an_mqtt_command_is_refused_on_the_refused_topic(broker, write_config, isolated_env,
                                                               mock_factory):
    config = load_config(str(write_config(CONFIG.format(url=broker.url))), env=isolated_env).config
    hardware = build_hardware(config, resident=True, pin_factory=mock_factory)
    Automation(config, hardware, pin_factory=mock_factory)  # hands the interlocks to the door
    await hardware.start()
    bridge = MqttBridge(config.mqtt, hardware)
    await bridge.start()
    try:
        async with Watcher(broker, f"{BASE}/#") as seen:
            await until(lambda: bridge.connected)
            await hardware.write("heater", True, asker("telegram:42"))
            await seen.publish(f"{BASE}/cooler/set", "ON")
            refusal = json.loads(await seen.wait(f"{BASE}/refused"))
            assert refusal["reason"] == "cooler: refused by interlock heat-or-cool (heater is on)"
            assert (refusal["event_type"], refusal["pin"]) == ("refused", "cooler")  # an HA event
            assert mock_factory.pin(22).state == 0
    finally:
        await bridge.close()
        await hardware.shutdown()
