"""One Mosquitto, one Home Assistant core and one agent (``edge-cli run``, on mock Pi-header pins
and an emulated Uno) per test module: Home Assistant starts once, the tests read and drive it."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import shutil
import signal
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiomqtt
import pytest

from tests.cameras.standin import install as install_rpicam
from tests.emulation.simavr import SimAvr
from tests.fakes.mosquitto import BINARY as MOSQUITTO
from tests.fakes.mosquitto import Mosquitto
from tests.helpers import EDGE_CLI, ROOT, cli
from tests.homeassistant.harness import HomeAssistant, HomeAssistantUnavailable, install

NODE = "greenhouse"
DISCOVERY_PREFIX = "homeassistant"

AGENT = """
[memory]
backend = "none"
[channels.cli]
enabled = false

[boards.gpio]
type = "gpio"
simulate = true
[boards.gpio.aliases]
pump = "GPIO17"
lamp = "GPIO18"
door = "GPIO27"
vent = "GPIO13"
[boards.gpio.pins]
pump = {{ mode = "output", safe = "off" }}
lamp = {{ mode = "pwm", safe = "off" }}
door = {{ mode = "input", pull = "up" }}
vent = {{ mode = "pwm" }}
[boards.gpio.servos.vent]
min_angle = 10
max_angle = 120

[boards.uno]
type = "arduino"
port = "{port}"
[boards.uno.aliases]
arm = "D9"
lid = "D2"
knob = "A0"
meter = "A1"
probe = "A2"
[boards.uno.pins]
arm = {{ mode = "pwm" }}
lid = {{ mode = "input", pull = "none", active = "low" }}
knob = {{ mode = "analog" }}
meter = {{ mode = "analog" }}
probe = {{ mode = "analog" }}

[sensors.pi]
type = "pi"
interval_seconds = 1

[sensors.energy]
type = "analog"
pin = "uno:A1"
quantity = "energy"
unit = "kWh"
scale = 100
interval_seconds = 1

[sensors.soil]
type = "analog"
pin = "uno:A2"
quantity = "temperature"
unit = "°C"
scale = 500
interval_seconds = 1

[cameras.bench]
type = "rpicam"
width = 640
height = 480
settle_seconds = 0.1

[mqtt]
url = "{url}"
node_id = "{node}"
servos = ["arm"]
reconnect_max_seconds = 0.5
[mqtt.inputs.door]
device_class = "door"
[mqtt.inputs.lid]
device_class = "opening"
"""
"""Every entity kind the agent announces: a switch (pump), a dimmable light (lamp), a servo's
number (arm, on the Uno: D9 drives one), binary sensors (door on the Pi header; lid on the Uno,
active low: its switch pulls the line high while the lid is shut), a raw analog sensor (knob),
sensors with units (energy in kWh, soil temperature in °C, both scaled from the Uno's analog
pins meter and probe, which get no raw entity of their own), the Pi's own health (what this
machine can read of it), the refused-command event and a camera's image (the Pi camera through a
stand-in rpicam-still, tests/cameras/standin.py)."""


VCGENCMD = """#!/bin/sh
# a Raspberry Pi's firmware tool, as the agent's Pi-health sensor calls it: under-voltage and
# throttling have occurred since boot (bits 16 and 18), nothing now
[ "$1" = get_throttled ] && echo throttled=0x50000
"""
"""Makes the Pi's throttling flags readable on any machine (the agent runs ``vcgencmd`` from
PATH), so they are announced as problem binary_sensors."""


@pytest.fixture(scope="module")
def home_assistant_venv() -> Path:
    """Installed once per machine (cached); a failure to install fails the tests, never skips."""
    try:
        return install()
    except HomeAssistantUnavailable as exc:
        pytest.fail(str(exc), pytrace=False)


@pytest.fixture(scope="module")
def ha_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mosquitto]:
    if not shutil.which(MOSQUITTO):  # Mosquitto() would skip; this test fails instead
        pytest.fail(f"{MOSQUITTO} is not installed (deploy/test-packages.txt; `make test` installs it)")
    with Mosquitto(tmp_path_factory.mktemp("broker")) as running:
        yield running


@pytest.fixture(scope="module")
def home_assistant(home_assistant_venv: Path, ha_broker: Mosquitto,
                   tmp_path_factory: pytest.TempPathFactory) -> Iterator[HomeAssistant]:
    core = HomeAssistant(home_assistant_venv, tmp_path_factory.mktemp("home-assistant"),
                         broker_port=ha_broker.port, discovery_prefix=DISCOVERY_PREFIX)
    try:
        try:
            core.start()
        except HomeAssistantUnavailable as exc:
            pytest.fail(str(exc), pytrace=False)
        yield core
    finally:  # whatever went wrong, no Home Assistant outlives the module
        core.stop()


@pytest.fixture(scope="module")
def uno(arduino_firmware: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[SimAvr]:
    emulator_bin, elf = arduino_firmware
    board = SimAvr(emulator_bin, elf, tmp_path_factory.mktemp("uno"))
    board.start()
    board.set_adc("A0", 2500)  # knob half way
    board.set_adc("A1", 1000)  # 0.2 of the reference: 20 kWh at scale 100
    board.set_adc("A2", 215)  # 21.5 °C at 10 mV per °C
    yield board
    board.stop()


@dataclass
class Agent:
    """``edge-cli run`` with the config and state in ``folder``, on ``broker``."""

    folder: Path
    broker: Mosquitto
    env: dict[str, str] = field(default_factory=dict)
    proc: subprocess.Popen[str] | None = None
    discovery: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Config topic -> the retained discovery payload the agent left on the broker."""
    entity_ids: dict[str, str] = field(default_factory=dict)
    """unique_id -> entity_id in Home Assistant, once it has every announced entity."""

    @property
    def log(self) -> str:
        path = self.folder / "stderr.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def start(self) -> None:
        """Run it, and return once it is online and its announcement can be read back."""
        with (self.folder / "stderr.log").open("a") as stderr:
            self.proc = subprocess.Popen([*EDGE_CLI, "run"], env=self.env, cwd=ROOT,
                                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                         stderr=stderr, text=True)
        assert asyncio.run(self._online()), (f"the agent was not online in time (exit status "
                                             f"{self.proc.poll()}):\n{self.log[-3000:]}")
        self.discovery = asyncio.run(retained_configs(self.broker, NODE))
        assert self.discovery, f"the agent announced nothing:\n{self.log[-3000:]}"

    def stop(self) -> None:
        """SIGTERM, as systemd stops it: it says ``offline`` and drives its outputs safe."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    async def _online(self, timeout: float = 60.0) -> bool:
        """``online`` published (not an earlier run's retained one) on the availability topic;
        False as soon as the agent exits (its log says why) or when the time is up."""
        assert self.proc is not None
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        async with aiomqtt.Client("127.0.0.1", self.broker.port) as client:
            await client.subscribe(f"edge-agent/{NODE}/availability", qos=1)
            messages = client.messages
            while loop.time() < deadline and self.proc.poll() is None:
                try:
                    message = await asyncio.wait_for(anext(messages), 0.5)
                except TimeoutError:
                    continue
                if message.payload == b"online" and not message.retain:
                    return True
        return False

    def gpio_read(self, pin: str) -> dict[str, Any]:
        """``edge-cli gpio read PIN --json`` (through the running agent's control socket)."""
        done = cli("gpio", "read", pin, "--json", env=self.env)
        assert done.returncode == 0, done.stdout + done.stderr
        data: dict[str, Any] = json.loads(done.stdout)["data"]
        return data


def turn_the_vent(agent: Agent) -> None:
    """A servo on the header has no position until it is first turned after a start (its state
    is unknown, ``None``): turned, so that every entity has a state to check."""
    turned = cli("gpio", "servo", "vent", "30", env=agent.env)
    assert turned.returncode == 0, turned.stdout + turned.stderr


def agent_env(folder: Path) -> dict[str, str]:
    """The agent's own environment: no EDGE_* of the caller, a home and state directory of its own."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("EDGE_") and k not in ("STATE_DIRECTORY", "RUNTIME_DIRECTORY")}
    home = folder / "home"
    home.mkdir(parents=True, exist_ok=True)
    return env | {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
                  "XDG_STATE_HOME": str(home / ".local" / "state"),
                  "EDGE_CONFIG": str(folder / "config.toml"), "EDGE_STATE_DIR": str(folder / "state"),
                  "EDGE_MEMORY__EMBEDDER": "none"}


async def retained_configs(broker: Mosquitto, node: str, timeout: float = 10.0) -> dict[str, dict[str, Any]]:
    """The node's retained discovery configs on the broker (what Home Assistant was told). The
    broker sends the retained messages of a subscription before anything published after it, so
    a marker published once subscribed comes back behind the last of them."""
    configs: dict[str, dict[str, Any]] = {}
    marker = f"edge-agent-test/{secrets.token_hex(4)}"
    async with aiomqtt.Client("127.0.0.1", broker.port) as client:
        await client.subscribe(f"{DISCOVERY_PREFIX}/+/{node}/+/config", qos=1)
        await client.subscribe(marker, qos=1)
        await client.publish(marker, b"", qos=1)
        async with asyncio.timeout(timeout):
            async for message in client.messages:
                if message.topic.value == marker:
                    break
                if message.retain and isinstance(message.payload, bytes) and message.payload:
                    configs[message.topic.value] = json.loads(message.payload)
    return configs


@pytest.fixture(scope="module")
def agent(home_assistant: HomeAssistant, ha_broker: Mosquitto, uno: SimAvr,
          tmp_path_factory: pytest.TempPathFactory) -> Iterator[Agent]:
    """``edge-cli run`` as a user starts it, once Home Assistant is listening; returned once its
    announcement is on the broker."""
    folder = tmp_path_factory.mktemp("agent")
    (folder / "config.toml").write_text(AGENT.format(port=uno.link, url=ha_broker.url, node=NODE))
    running = Agent(folder, ha_broker, agent_env(folder))
    bin_dir = folder / "bin"
    bin_dir.mkdir()
    vcgencmd = bin_dir / "vcgencmd"
    vcgencmd.write_text(VCGENCMD)
    vcgencmd.chmod(0o755)
    install_rpicam(bin_dir)
    running.env["PATH"] = f"{bin_dir}{os.pathsep}{running.env.get('PATH', os.defpath)}"
    try:
        running.start()
        turn_the_vent(running)
        yield running
    finally:
        running.stop()
