"""A ``/set`` from the broker drives firmware in an emulated Arduino Uno (simavr): the LED's pin
makes an edge, a servo pin takes its angle, a pin outside the allowlist makes none."""

from __future__ import annotations

import asyncio

import pytest

from edge.config.loader import load_config
from edge.hardware import build_hardware
from edge.mqtt.bridge import MqttBridge
from tests.fakes.mosquitto import Watcher
from tests.helpers import until

pytestmark = pytest.mark.emulator

BASE = "edge-agent/uno-node"
UNO = """
[boards.gpio]
pins = {{}}
aliases = {{}}
[boards.uno]
type = "arduino"
port = "{port}"
aliases = {{ led = "D13", arm = "D9" }}
[boards.uno.pins]
led = {{ mode = "output", safe = "off" }}
arm = {{ mode = "pwm" }}
[mqtt]
url = "{url}"
node_id = "uno-node"
servos = ["arm"]
"""


async def test_mqtt_commands_reach_the_firmware(simavr_uno, broker, write_config, isolated_env):
    text = UNO.format(port=simavr_uno.link, url=broker.url)
    config = load_config(str(write_config(text)), env=isolated_env).config
    hardware = build_hardware(config, resident=True)
    await hardware.start()
    bridge = MqttBridge(config.mqtt, hardware)
    await bridge.start()
    try:
        async with Watcher(broker, f"{BASE}/#") as seen:
            await until(lambda: bridge.connected)
            await seen.publish(f"{BASE}/led/set", "ON")
            await asyncio.to_thread(simavr_uno.wait_edge, "D13", 1)
            await seen.wait(f"{BASE}/led", "ON")
            await seen.publish(f"{BASE}/arm/set", "90")
            await seen.wait(f"{BASE}/arm", "90")
            await seen.publish(f"{BASE}/D12/set", "ON")  # not a published pin: finds nothing
            await asyncio.sleep(0.2)
            assert simavr_uno.levels("D12") == [] and seen.payloads(f"{BASE}/refused") == []
    finally:
        await bridge.close()
        await hardware.shutdown()
