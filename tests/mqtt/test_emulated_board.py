"""A ``/set`` from the broker drives firmware in an emulated Arduino Uno (simavr): the LED's pin
makes an edge, a servo pin takes its angle, a pin outside the allowlist makes none; an analog
pin's value is published as it moves."""

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


async def test_an_analog_pin_is_published_as_it_moves(simavr_uno, broker, write_config,
                                                      isolated_env):
    """The raw analog pin's entity follows the pin (it kept its value from connecting): read
    through the door every ``analog_interval_seconds``, published when it moved by more than
    ``analog_deadband``, and not for less."""
    text = f"""
[boards.gpio]
pins = {{}}
aliases = {{}}
[boards.uno]
type = "arduino"
port = "{simavr_uno.link}"
aliases = {{ knob = "A0" }}
[boards.uno.pins]
knob = {{ mode = "analog" }}
[mqtt]
url = "{broker.url}"
node_id = "uno-node"
analog_interval_seconds = 0.2
analog_deadband = 0.02
"""
    config = load_config(str(write_config(text)), env=isolated_env).config
    hardware = build_hardware(config, resident=True)
    await hardware.start()
    bridge = MqttBridge(config.mqtt, hardware)
    await bridge.start()

    def values() -> list[float]:
        return [float(p) for p in seen.payloads(f"{BASE}/knob")]

    try:
        async with Watcher(broker, f"{BASE}/#") as seen:
            await until(lambda: bridge.connected)
            assert "mqtt-analog" in [task.name for task in bridge.supervised_tasks()]
            simavr_uno.set_adc("A0", 1000)  # 0.2 of the 5 V reference
            await until(lambda: any(abs(v - 0.2) < 0.01 for v in values()), timeout=10)
            published = len(values())
            simavr_uno.set_adc("A0", 1040)  # 0.008 more: inside the deadband
            await asyncio.sleep(1.0)  # five rounds of reads
            assert len(values()) == published, values()
            simavr_uno.set_adc("A0", 4000)
            await until(lambda: any(abs(v - 0.8) < 0.01 for v in values()), timeout=10)
            assert all(abs(v - 0.208) > 0.002 for v in values())
    finally:
        await bridge.close()
        await hardware.shutdown()


async def test_a_board_that_comes_up_later_has_its_pins_published(simavr_uno, broker,
                                                                  write_config, isolated_env):
    """An Uno that was not there when the node was announced (unplugged, or its port held by
    another process): once the agent connects it, its pins' states follow (Home Assistant
    showed them unknown until something changed)."""
    simavr_uno.stop()
    simavr_uno.link.unlink(missing_ok=True)
    text = f"""
[boards.gpio]
pins = {{}}
aliases = {{}}
[boards.uno]
type = "arduino"
port = "{simavr_uno.link}"
aliases = {{ led = "D13", lid = "D2" }}
[boards.uno.pins]
led = {{ mode = "output", safe = "off" }}
lid = {{ mode = "input", pull = "none", active = "high" }}
[mqtt]
url = "{broker.url}"
node_id = "uno-node"
"""
    config = load_config(str(write_config(text)), env=isolated_env).config
    hardware = build_hardware(config, resident=True)
    await hardware.start()
    bridge = MqttBridge(config.mqtt, hardware)
    await bridge.start()
    try:
        async with Watcher(broker, f"{BASE}/#") as seen:
            await until(lambda: bridge.connected)
            await seen.wait(f"{BASE}/availability", "online")
            assert seen.payloads(f"{BASE}/lid") == [] and seen.payloads(f"{BASE}/led") == []
            simavr_uno.start()  # plugged in: the board supervisor connects it
            assert await seen.wait(f"{BASE}/lid", timeout=20) == b"OFF"
            assert await seen.wait(f"{BASE}/led", timeout=5) == b"OFF"
    finally:
        await bridge.close()
        await hardware.shutdown()
