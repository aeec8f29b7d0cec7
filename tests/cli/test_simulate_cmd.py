"""``edge-cli run --simulate`` runs a config written for the real plant (an Arduino on
/dev/ttyACM0, a BME280) on simulated boards and sensors, and ``edge-cli gpio simulate`` /
``edge-cli sensors simulate`` drive it through the running agent; with no agent there is nothing
to pretend to (exit 1), and bad words are exit 2 before anything is asked."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

from tests.helpers import EDGE_CLI, ROOT, cli

REAL_PLANT = """
[boards.uno]
type = "arduino"
port = "/dev/ttyACM0"
aliases = { lamp = "D13", button = "D2" }
[boards.uno.pins]
lamp = { mode = "output", safe = "off" }
button = { mode = "input" }

[sensors.greenhouse]
type = "bme280"

[[rules]]
name = "lamp"
when = "button pressed"
cooldown_seconds = 0
then = "gpio write lamp on"
"""


def test_run_simulate_then_press_and_hold_by_hand(write_config, isolated_env):
    env = {**isolated_env, "EDGE_CONFIG": str(write_config(REAL_PLANT))}
    proc = subprocess.Popen([*EDGE_CLI, "run", "--simulate"], env=env, cwd=ROOT,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        socket = Path(env["EDGE_STATE_DIR"]) / "control.sock"
        deadline = time.monotonic() + 30
        while not socket.exists():
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert time.monotonic() < deadline
            time.sleep(0.02)
        pressed = cli("gpio", "simulate", "button", "on", env=env)
        assert pressed.returncode == 0, pressed.stderr
        assert "uno:D2 (button) simulated on" in pressed.stdout
        deadline = time.monotonic() + 10
        while True:
            pins = json.loads(cli("pins", "--json", env=env).stdout)["data"]
            lamp = [p for b in pins["boards"] for p in b["pins"] if p["pin"] == "D13"]
            if lamp and lamp[0]["value"] == 1:
                break
            assert time.monotonic() < deadline, pins
            time.sleep(0.05)
        held = cli("sensors", "simulate", "greenhouse", "humidity", "71", env=env)
        assert held.returncode == 0 and "humidity 71 %" in held.stdout, held.stderr
        released = cli("sensors", "simulate", "greenhouse", "humidity", "--release", env=env)
        assert released.returncode == 0 and "released" in released.stdout, released.stderr
        wrong = cli("sensors", "simulate", "greenhouse", "rain", "3", env=env)
        assert wrong.returncode == 2 and "not 'rain'" in wrong.stderr
    finally:
        proc.terminate()
        proc.wait(15)


def test_without_an_agent_there_is_nothing_to_simulate(write_config, isolated_env):
    env = {**isolated_env, "EDGE_CONFIG": str(write_config(REAL_PLANT))}
    out = cli("gpio", "simulate", "button", "on", env=env)
    assert out.returncode == 1 and "edge-cli run --simulate" in out.stderr
    bad = cli("sensors", "simulate", "greenhouse", "temperature", "warm", env=env)
    assert bad.returncode == 2 and "'warm' is not a number" in bad.stderr
