"""MCP: a tool call (``pin_write``) -> pin changed, over stdio through ``edge-cli mcp`` and the
running agent's control socket, p50/p99; next to it the whole call (until the client has the
result, which carries the pin's read-back). A real agent in this process (gpiozero's mock pins),
the SDK's own stdio client, ``edge-cli mcp`` as the client would run it.

Then the other way: the agent as a client of a stdio server (sandboxed) whose tool answers with
50 MB, the agent's RSS idle and at its peak during the call (tests/mcp/big_result.py, in a fresh
interpreter), next to the target: at most 20 MB over idle."""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from gpiozero.pins.mock import MockFactory, MockPWMPin
from mcp import types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from bench.process import Switches, percentile, row
from edge.config.loader import load_config
from edge.runtime import Runtime
from tests.helpers import ROOT

CALLS = 500
CONFIG = """
[memory]
backend = "none"
[channels.cli]
enabled = false
[security]
autonomy = "full"
max_actuations_per_minute = 1000000
[boards.gpio.aliases]
led = "GPIO17"
[boards.gpio.pins]
led = { mode = "output", safe = "off", max_switches_per_minute = 6000 }
"""


def figures(samples: list[float]) -> str:
    return f"p50 {statistics.median(samples):5.2f} ms  p99 {percentile(samples, 0.99):5.2f} ms"


STARTS = 5


async def start_up(params: StdioServerParameters) -> list[float]:
    """``edge-cli mcp`` started until the client has its tools (the catalog's, registered by a
    loop when the server is built), :data:`STARTS` times, in ms."""
    starts = []
    for _ in range(STARTS):
        start = time.perf_counter()
        async with (stdio_client(params) as (read, write),
                    ClientSession(read, write, client_info=types.Implementation(
                        name="bench", version="1")) as session):
            await session.initialize()
            tools = (await session.list_tools()).tools
            starts.append((time.perf_counter() - start) * 1000)
            assert "pin_write" in {tool.name for tool in tools}
    return starts


async def measure(folder: Path) -> tuple[list[float], list[float], list[float]]:
    (folder / "config.toml").write_text(CONFIG)
    env = dict(os.environ, EDGE_CONFIG=str(folder / "config.toml"),
               EDGE_STATE_DIR=str(folder / "state"), HOME=str(folder))
    factory = MockFactory(pin_class=MockPWMPin)
    runtime = Runtime(load_config(env=env), resident=True, pin_factory=factory,
                      stdin=open(os.devnull))  # noqa: SIM115 (the agent's, for its whole run)
    agent = asyncio.create_task(runtime.run())
    while not runtime.ready.is_set():
        assert not agent.done(), agent.exception()
        await asyncio.sleep(0.01)
    switches = Switches(runtime.hardware)
    to_pin, whole = [], []
    params = StdioServerParameters(command=sys.executable, args=["-m", "edge", "mcp"], env=env,
                                   cwd=ROOT)
    try:
        starts = await start_up(params)
        async with (stdio_client(params) as (read, write),
                    ClientSession(read, write, client_info=types.Implementation(
                        name="bench", version="1")) as session):
            await session.initialize()
            for i in range(CALLS):
                switches.arm()
                start = time.perf_counter()
                result = await session.call_tool("pin_write", {"pin": "led",
                                                               "value": "on" if i % 2 == 0 else "off"})
                done = time.perf_counter()
                assert not result.is_error, result.content
                switched = await switches.next(5)
                assert factory.pin(17).state == (1 if i % 2 == 0 else 0)
                to_pin.append((switched - start) * 1000)
                whole.append((done - start) * 1000)
    finally:
        runtime.request_stop("bench")
        await agent
    return starts, to_pin, whole


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        starts, to_pin, whole = asyncio.run(measure(Path(tmp)))
    print(f"MCP over stdio (edge-cli mcp -> control socket -> the door), {CALLS} pin_write calls")
    row("tool call -> pin changed", figures(to_pin))
    row("whole call (result with read-back)", figures(whole))
    row(f"edge-cli mcp start -> tools listed (n={STARTS})",
        f"p50 {statistics.median(starts):5.0f} ms  max {max(starts):5.0f} ms")
    done = subprocess.run([sys.executable, "-m", "tests.mcp.big_result", "50000000"], cwd=ROOT,
                          capture_output=True, text=True, check=True, timeout=300)
    idle, peak, outcome = done.stdout.split()
    print("An MCP server's 50 MB result (stdio, sandboxed): the agent's RSS")
    row("idle", f"{int(idle) / 1024:.1f} MB")
    row(f"peak during the call ({outcome})", f"{int(peak) / 1024:.1f} MB",
        "<= idle + 20 MB", f"+{(int(peak) - int(idle)) / 1024:.1f} MB")
