"""``edge-cli gpio servo`` on the Pi header (mock pins in a running agent): a servo declared in
``[boards.gpio.servos]`` turns to the angle (the agent's pin shows the pulse), an angle outside
its range and a pwm pin not declared as a servo are refused, and the pin is left as it was.
The pulse each angle makes is watched on the mock pin in ``tests/peripherals/test_gpio_servos.py``."""

from __future__ import annotations

import json
import signal

import pytest

from tests.helpers import cli, start_agent

CONFIG = """
[boards.gpio.aliases]
vent = "GPIO18"
fan = "GPIO12"
[boards.gpio.pins]
vent = { mode = "pwm" }
fan = { mode = "pwm" }
[boards.gpio.servos.vent]
max_angle = 120
min_pulse_us = 500
max_pulse_us = 2500
"""


@pytest.fixture
def env(isolated_env, write_config):
    return {**isolated_env, "EDGE_CONFIG": str(write_config(CONFIG))}


def header_pins(env: dict[str, str]) -> dict[str, dict]:
    body = json.loads(cli("pins", "--json", env=env).stdout)
    (board,) = body["data"]["boards"]
    return {pin["pin"]: pin for pin in board["pins"]}


def test_a_declared_servo_turns_and_others_are_refused(env):
    agent = start_agent(env)
    try:
        out = cli("gpio", "servo", "vent", "90", "--json", env=env)
        body = json.loads(out.stdout)
        assert out.returncode == 0 and body["ok"], out.stdout + out.stderr
        assert (body["data"]["angle"], body["message"]) == (90.0, "gpio:GPIO18 (vent) servo at "
                                                                  "90 degrees")
        vent = header_pins(env)["GPIO18"]
        assert (vent["frequency"], vent["value"]) == (50, 90.0)  # 50 Hz servo pulses, its angle

        out = cli("gpio", "servo", "vent", "150", env=env)
        assert out.returncode == 1
        assert "angle 150 is outside GPIO18's range 0..120 degrees" in out.stderr, out.stderr
        out = cli("gpio", "servo", "fan", "90", env=env)
        assert out.returncode == 1
        assert ("GPIO12 is not declared as a servo on board gpio; add "
                "[boards.gpio.servos.GPIO12]") in out.stderr, out.stderr
        pins = header_pins(env)
        # the pulses go on as they were: 2000 µs of 20 ms (the door, having been refused, shows
        # the pin's duty rather than an angle it no longer vouches for)
        assert (pins["GPIO18"]["frequency"], pins["GPIO18"]["value"]) == (50, pytest.approx(0.1))
        assert pins["GPIO12"]["frequency"] == 100.0  # still a plain pwm pin
    finally:
        agent.send_signal(signal.SIGTERM)
        agent.wait(timeout=30)
