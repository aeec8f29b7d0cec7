"""MQTT: a ``/set`` command -> pin changed, over a real Mosquitto on loopback, p50/p99. Our own
time is from the message reaching the bridge to the pin changed (gpiozero's mock pins take no
time of their own; target p99 under 5 ms); next to it the whole path from the publisher and the
baseline, the broker's round trip alone (publish -> a plain subscriber receives). Then the idle
memory the MQTT client adds to a running agent: two real daemons, one with [mqtt] (connected,
subscribed, announced) and one without (target under 3 MB)."""

from __future__ import annotations

import asyncio
import compileall
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import aiomqtt
from gpiozero.pins.mock import MockFactory, MockPWMPin

from bench.process import BIN, Switches, percentile, row, rss_kib
from edge.config.model import Config
from edge.hardware import build_hardware
from edge.mqtt.bridge import MqttBridge
from tests.fakes.mosquitto import Mosquitto
from tests.helpers import ROOT

COMMANDS = 1000
IDLE_SECONDS = 8.0
PAIRS = 3
BASE = "edge-agent/bench"


def figures(samples: list[float]) -> str:
    return f"p50 {statistics.median(samples):5.2f} ms  p99 {percentile(samples, 0.99):5.2f} ms"


async def broker_round_trip(broker: Mosquitto) -> list[float]:
    samples = []
    async with aiomqtt.Client("127.0.0.1", broker.port, identifier="bench-echo") as client:
        await client.subscribe(f"{BASE}/echo", qos=1)
        messages = client.messages
        for i in range(COMMANDS):
            start = time.perf_counter()
            await client.publish(f"{BASE}/echo", str(i).encode(), qos=1)
            async for message in messages:
                if message.payload == str(i).encode():
                    break
            samples.append((time.perf_counter() - start) * 1000)
    return samples


async def command_to_pin(broker: Mosquitto) -> tuple[list[float], list[float]]:
    factory = MockFactory(pin_class=MockPWMPin)
    config = Config.model_validate({
        "boards": {"gpio": {"aliases": {"led": "GPIO17"},
                            "pins": {"led": {"mode": "output", "safe": "off",
                                             "max_switches_per_minute": 6000}}}},
        "security": {"max_actuations_per_minute": 1_000_000},
        "mqtt": {"url": broker.url, "node_id": "bench", "discovery": False}})
    hardware = build_hardware(config, resident=True, pin_factory=factory)
    await hardware.start()
    bridge = MqttBridge(config.mqtt, hardware)
    arrived: list[float] = []
    received = bridge.on_message  # timestamped on arrival, for the bench only

    def timed(message: aiomqtt.Message) -> bool:
        arrived.append(time.perf_counter())
        return received(message)

    bridge.on_message = timed  # type: ignore[method-assign]
    switches = Switches(hardware)
    await bridge.start()
    ours, whole = [], []
    try:
        while not bridge.connected:
            await asyncio.sleep(0.01)
        async with aiomqtt.Client("127.0.0.1", broker.port, identifier="bench-commander") as client:
            for i in range(COMMANDS):
                switches.arm()
                start = time.perf_counter()
                await client.publish(f"{BASE}/led/set", b"ON" if i % 2 == 0 else b"OFF", qos=1)
                switched = await switches.next(5)
                assert factory.pin(17).state == (1 if i % 2 == 0 else 0)
                ours.append((switched - arrived[-1]) * 1000)
                whole.append((switched - start) * 1000)
    finally:
        await bridge.close()
        await hardware.shutdown()
    return ours, whole


def idle_rss(broker: Mosquitto, folder: Path) -> tuple[int, int]:
    """Median RSS KiB of idle daemons on mock pins, (without [mqtt], with it), ``PAIRS`` of each
    side by side."""
    procs: list[tuple[str, subprocess.Popen[bytes]]] = []
    for index in range(PAIRS):
        for name, mqtt in (("plain", ""),
                           ("mqtt", f'[mqtt]\nurl = "{broker.url}"\nnode_id = "idle{index}"\n')):
            home = folder / f"{name}{index}"
            home.mkdir()
            (home / "config.toml").write_text('[memory]\nbackend = "none"\n[channels.cli]\n'
                                              f'enabled = false\n{mqtt}')
            env = dict(os.environ, EDGE_CONFIG=str(home / "config.toml"),
                       EDGE_STATE_DIR=str(home / "state"), HOME=str(home))
            procs.append((name, subprocess.Popen([str(BIN / "edge-cli"), "run"], env=env,
                                                 stdin=subprocess.DEVNULL,
                                                 stdout=subprocess.DEVNULL,
                                                 stderr=subprocess.DEVNULL)))
    rss: dict[str, list[int]] = {"plain": [], "mqtt": []}
    try:
        time.sleep(IDLE_SECONDS)
        for name, proc in procs:
            assert proc.poll() is None, "a daemon exited"
            rss[name].append(rss_kib(proc.pid))
    finally:
        for _, proc in procs:
            proc.terminate()
        for _, proc in procs:
            proc.wait(20)
    return int(statistics.median(rss["plain"])), int(statistics.median(rss["mqtt"]))


def main() -> None:
    for package in ("edge", "peripherals"):  # as installed: a checkout under
        compileall.compile_dir(ROOT / package, quiet=1)  # PYTHONDONTWRITEBYTECODE compiles each run
    with tempfile.TemporaryDirectory() as tmp, Mosquitto(Path(tmp) / "broker") as broker:
        baseline = asyncio.run(broker_round_trip(broker))
        ours, whole = asyncio.run(command_to_pin(broker))
        print(f"MQTT over loopback Mosquitto, {COMMANDS} commands each (QoS 1)")
        row("broker round trip alone (baseline)", figures(baseline))
        row("publish /set -> pin changed (whole path)", figures(whole))
        row("our own time: message in -> pin changed", figures(ours), "target p99 < 5 ms")
        quick = Mosquitto(Path(tmp) / "nodelay")
        with quick.conf.open("a") as conf:  # as the README asks of a broker (no Nagle delay)
            conf.write("set_tcp_nodelay true\n")
        with quick:
            _, quick_whole = asyncio.run(command_to_pin(quick))
        row("whole path, broker with set_tcp_nodelay true", figures(quick_whole))
        plain, with_mqtt = idle_rss(broker, Path(tmp))
        added = (with_mqtt - plain) / 1024
        row(f"idle agent RSS without [mqtt] (median of {PAIRS})", f"{plain / 1024:.1f} MB")
        row(f"idle agent RSS with [mqtt], connected ({PAIRS})", f"{with_mqtt / 1024:.1f} MB")
        row("added by the MQTT client", f"{added:+.1f} MB", "target < 3 MB")
        if percentile(ours, 0.99) >= 5 or added >= 3:
            raise SystemExit(1)


if __name__ == "__main__":
    main()
