"""A servo on the Pi header in Home Assistant, on a real Mosquitto: a ``number`` slider over the
angle range of its ``[boards.gpio.servos]`` section, its state unknown (``None``) until it is
first turned, and a command from the broker that turns it through the one door (the mock pin's
pulse changes; an angle outside its range is refused)."""

from __future__ import annotations

import json
from contextlib import asynccontextmanager

import pytest

from edge.config.loader import load_config
from edge.hardware import build_hardware
from edge.mqtt.bridge import MqttBridge
from tests.fakes.mosquitto import Watcher
from tests.helpers import until

PREFIX = "homeassistant"
BASE = "edge-agent/shed"
CONFIG = """
[boards.gpio.aliases]
vent = "GPIO18"
[boards.gpio.pins]
vent = {{ mode = "pwm" }}
[boards.gpio.servos.vent]
min_angle = 10
max_angle = 120
[mqtt]
url = "{url}"
node_id = "shed"
"""


@asynccontextmanager
async def node(broker, write_config, env, factory):
    config = load_config(str(write_config(CONFIG.format(url=broker.url))), env=env).config
    hardware = build_hardware(config, resident=True, pin_factory=factory)
    await hardware.start()
    bridge = MqttBridge(config.mqtt, hardware)
    await bridge.start()
    try:
        await until(lambda: bridge.connected)
        yield bridge
    finally:
        await bridge.close()
        await hardware.shutdown()


async def test_a_declared_servo_is_a_slider_over_its_range_and_the_broker_turns_it(
        broker, write_config, isolated_env, mock_factory):
    async with Watcher(broker, f"{PREFIX}/#", f"{BASE}/#") as seen, \
            node(broker, write_config, isolated_env, mock_factory):
        body = json.loads(await seen.wait(f"{PREFIX}/number/shed/vent/config"))
        assert {key: body[key] for key in ("min", "max", "step", "mode", "unit_of_measurement",
                                           "command_topic", "state_topic")} == {
            "min": 10, "max": 120, "step": 1, "mode": "slider", "unit_of_measurement": "°",
            "command_topic": f"{BASE}/vent/set", "state_topic": f"{BASE}/vent"}
        assert await seen.wait(f"{BASE}/vent") == b"None"  # not turned yet: no known position
        pin = mock_factory.pin(18)
        await seen.publish(f"{BASE}/vent/set", "65")
        await seen.wait(f"{BASE}/vent", "65")
        assert pin.frequency == 50
        assert pin.state == pytest.approx(0.0015 / 0.020)  # the middle of 10..120: 1500 µs
        mark = len(seen.messages)
        await seen.publish(f"{BASE}/vent/set", "150")  # beyond the slider: the door refuses
        refusal = json.loads(await seen.wait(f"{BASE}/refused", after=mark))
        assert "outside GPIO18's range 10..120 degrees" in refusal["reason"]
        assert pin.state == pytest.approx(0.0015 / 0.020)
