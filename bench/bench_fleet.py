"""The fleet: a controller's command to a remote pin, switched, p50/p99 over a real Mosquitto on
loopback (target p99 under 20 ms). Two real agents (Runtimes on gpiozero's mock pins) in one
process: the controller's ``node`` board asks node ``shed``, which runs the command through its
own door and answers with its read-back. The baseline, from the same run: the same switch
through the node's own door, locally."""

from __future__ import annotations

import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path

from gpiozero.pins.mock import MockFactory, MockPWMPin

from bench.process import percentile, row
from edge.config.loader import load_config
from edge.core.requester import Requester
from edge.runtime import Runtime
from tests.fakes.mosquitto import Mosquitto

COMMANDS = 200
TARGET_P99_MS = 20.0
COMMON = """
[paths]
state_dir = "{state}"
[memory]
backend = "none"
[channels.cli]
enabled = false
[security]
autonomy = "full"
max_actuations_per_minute = 1000000
[mqtt]
url = "{url}"
node_id = "{node}"
discovery = false
"""
NODE = """
[boards.gpio]
type = "gpio"
[boards.gpio.aliases]
pump = "GPIO22"
[boards.gpio.pins]
pump = {mode = "output", safe = "off", max_switches_per_minute = 6000}
"""
CONTROLLER = """
[boards.shed]
type = "node"
node_id = "shed"
[boards.shed.pins]
pump = {mode = "output", max_switches_per_minute = 6000}
"""


def figures(samples: list[float]) -> str:
    return f"p50 {statistics.median(samples):5.2f} ms  p99 {percentile(samples, 0.99):5.2f} ms"


async def start(folder: Path, node: str, url: str, boards: str, factory: MockFactory) -> Runtime:
    folder.mkdir()
    config = folder / "config.toml"
    config.write_text(COMMON.format(state=folder / "state", url=url, node=node) + boards)
    runtime = Runtime(load_config(str(config), env={}), resident=True, pin_factory=factory,
                      stdin=open(os.devnull))  # noqa: SIM115 (the runtime's for its life)
    task = asyncio.create_task(runtime.run())
    while not runtime.ready.is_set():
        assert not task.done(), task.exception()
        await asyncio.sleep(0.01)
    assert runtime.mqtt is not None
    runtime.mqtt.serve_requests(runtime)
    return runtime


async def measure(folder: Path, url: str) -> tuple[list[float], list[float]]:
    factory = MockFactory(pin_class=MockPWMPin)
    node = await start(folder / "shed", "shed", url, NODE, factory)
    controller = await start(folder / "ctl", "ctl", url, CONTROLLER, factory)
    runtimes = (controller, node)
    try:
        while not controller.hardware.boards["shed"].connected:
            await asyncio.sleep(0.01)
        asker = Requester("cli", "bench")
        remote, local = [], []
        for i in range(COMMANDS):
            on = i % 2 == 0
            started = time.perf_counter()
            await controller.hardware.write("shed:pump", on, asker)
            remote.append((time.perf_counter() - started) * 1000)
            assert factory.pin(22).state == int(on)
        for i in range(COMMANDS):
            on = i % 2 == 0
            started = time.perf_counter()
            await node.hardware.write("pump", on, asker)
            local.append((time.perf_counter() - started) * 1000)
            assert factory.pin(22).state == int(on)
    finally:
        for runtime in runtimes:
            runtime.request_stop("bench")
        await asyncio.sleep(0.5)
    return remote, local


def main() -> None:
    for name in ("EDGE_STATE_DIR", "EDGE_CONFIG"):
        os.environ.pop(name, None)
    with tempfile.TemporaryDirectory() as tmp:
        broker = Mosquitto(Path(tmp) / "broker")
        with broker.conf.open("a") as conf:  # as the README asks of a broker (no Nagle delay)
            conf.write("set_tcp_nodelay true\n")
        with broker:
            remote, local = asyncio.run(measure(Path(tmp), broker.url))
    print(f"Fleet over loopback Mosquitto, {COMMANDS} switches each (request and answer QoS 1)")
    row("node's own door, locally (baseline)", figures(local))
    row("controller -> remote pin switched, answered", figures(remote),
        f"target p99 < {TARGET_P99_MS:g} ms")
    if percentile(remote, 0.99) >= TARGET_P99_MS:
        print("  FLEET ROUND TRIP ABOVE TARGET")


if __name__ == "__main__":
    main()
