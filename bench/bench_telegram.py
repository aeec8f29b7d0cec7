"""Telegram command -> pin change, our own time: a real agent (in this process, on mock pins)
polls a loopback Bot API served by another process; each `/gpio led on|off` is timed from the
moment that server hands it out in a getUpdates answer to the moment the pin has switched
(target p99 under 5 ms). Each command waits until the previous reply has been delivered, as a
person's would. Baseline: the same switch asked for directly through the hardware door."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import statistics
import tempfile
import time
from multiprocessing.connection import Connection
from pathlib import Path

from gpiozero.pins.mock import MockFactory, MockPWMPin

from bench.process import Switches, percentile, row
from edge.config.loader import load_config
from edge.core.requester import Requester
from edge.runtime import Runtime
from tests.fakes.telegram_server import FakeTelegram, telegram_config

COMMANDS = 300


def serve(pipe: Connection) -> None:
    """The Bot API in its own process (its threads never hold this agent's GIL): answers
    ``("push", text)`` with the update id, ``("delivered",)`` with the count of replies,
    ``("handed",)`` with when each update was handed out."""
    with FakeTelegram() as server:
        pipe.send((server.token, server.api_base))
        while True:
            request = pipe.recv()
            if request[0] == "push":
                server.push_message(42, request[1])
                pipe.send(server.next_update_id - 1)
            elif request[0] == "delivered":
                pipe.send(len(server.delivered))
            elif request[0] == "handed":
                pipe.send(dict(server.handed_out))
            else:
                return


class Remote:
    """What telegram_config needs of the server, for the one in the other process."""

    def __init__(self, token: str, api_base: str):
        self.token, self.api_base = token, api_base


async def command_to_pin(pipe: Connection, state: Path) -> None:
    server = Remote(*pipe.recv())
    config = state / "config.toml"
    config.write_text(telegram_config(server, extra="rate_limit_per_minute = 100000")  # type: ignore[arg-type]
                      + "[security]\nmax_actuations_per_minute = 100000\n"
                      + '[boards.gpio.pins]\nled = { mode = "output", safe = "off", '
                        'max_switches_per_minute = 6000 }\n')
    env = {k: v for k, v in os.environ.items() if not k.startswith("EDGE_")}
    env.update(EDGE_STATE_DIR=str(state), EDGE_MEMORY__EMBEDDER="none")
    with open(os.devnull) as devnull:
        runtime = Runtime(load_config(str(config), env=env), resident=True,
                          pin_factory=MockFactory(pin_class=MockPWMPin), stdin=devnull)
        task = asyncio.create_task(runtime.run())
        while not (state / "control.sock").exists():
            await asyncio.sleep(0.01)
        switches = Switches(runtime.hardware)
        at: dict[int, float] = {}
        direct = []
        try:
            for i in range(COMMANDS):
                switches.arm()
                pipe.send(("push", f"/gpio led {'on' if i % 2 == 0 else 'off'}"))
                update_id = pipe.recv()
                at[update_id] = await switches.next()
                while True:  # its reply is out: the next command finds the agent idle
                    pipe.send(("delivered",))
                    if pipe.recv() > i:
                        break
                    await asyncio.sleep(0.001)
            pipe.send(("handed",))
            handed = pipe.recv()
            asker = Requester("bench", "direct")
            for i in range(COMMANDS):
                switches.arm()
                start = time.perf_counter()
                await runtime.hardware.write("led", i % 2 == 0, asker)
                direct.append((await switches.next() - start) * 1000)
        finally:
            runtime.request_stop("bench")
            await task
    samples = [(at[u] - handed[u]) * 1000 for u in at]
    print(f"Telegram /gpio command -> pin switched (loopback Bot API in another process, "
          f"mock pins, n={COMMANDS})")
    row("command -> pin p50", f"{statistics.median(samples):.2f} ms")
    row("command -> pin p99", f"{percentile(samples, 0.99):.2f} ms", "target < 5 ms")
    row("baseline: direct write p50 / p99",
        f"{statistics.median(direct):.3f} / {percentile(direct, 0.99):.3f} ms")


def main() -> None:
    ours, theirs = multiprocessing.Pipe()
    server = multiprocessing.get_context("spawn").Process(target=serve, args=(theirs,))
    server.start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            asyncio.run(command_to_pin(ours, Path(tmp)))
    finally:
        ours.send(("stop",))
        server.join(10)
