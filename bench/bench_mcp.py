"""MCP: a tool call (``pin_write``) -> pin changed, over stdio through ``edge-cli mcp`` and the
running agent's control socket, p50/p99; next to it the whole call (until the client has the
result, which carries the pin's read-back). A real agent in this process (gpiozero's mock pins),
the SDK's own stdio client, ``edge-cli mcp`` as the client would run it.

Start-up: ``edge-cli mcp`` started until its ``initialize`` is answered, and until the client has
its tools, wall and CPU time (the process's user + system time at that moment, which a busy
machine does not stretch), beside the target of 1 s. Our sources are byte-compiled first, as
``pip install`` leaves an installed agent (a checkout under PYTHONDONTWRITEBYTECODE would compile
every module on every start).

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
from typing import NamedTuple

from gpiozero.pins.mock import MockFactory, MockPWMPin
from mcp import types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from bench.bench_startup import byte_compile
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


STARTS = 9
START_TARGET_MS = 1000.0
"""``edge-cli mcp`` answers ``initialize``, and lists its tools, within a second."""
TICKS = os.sysconf("SC_CLK_TCK")


class Start(NamedTuple):
    """One start of ``edge-cli mcp``, in ms: wall and CPU time until ``initialize`` was answered
    and until the tools were listed."""

    initialized: float
    initialized_cpu: float
    listed: float
    listed_cpu: float


def server_cpu_ms() -> float:
    """User + system time so far of the ``edge-cli mcp`` this process started (the only child
    running ``-m edge mcp``), from /proc."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            command = (stat.parent / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if int(fields[1]) == os.getpid() and command[1:4] == [b"-m", b"edge", b"mcp"]:
            return (int(fields[11]) + int(fields[12])) * 1000 / TICKS
    raise RuntimeError("edge-cli mcp is not running")


async def start_up(params: StdioServerParameters) -> list[Start]:
    """``edge-cli mcp`` started until ``initialize`` is answered and until the client has its
    tools, :data:`STARTS` times after one warm-up."""
    starts = []
    for _ in range(STARTS + 1):
        start = time.perf_counter()
        async with (stdio_client(params) as (read, write),
                    ClientSession(read, write, client_info=types.Implementation(
                        name="bench", version="1")) as session):
            await session.initialize()
            initialized = (time.perf_counter() - start) * 1000
            initialized_cpu = server_cpu_ms()
            tools = (await session.list_tools()).tools
            listed = (time.perf_counter() - start) * 1000
            starts.append(Start(initialized, initialized_cpu, listed, server_cpu_ms()))
            assert "pin_write" in {tool.name for tool in tools}
    return starts[1:]


def start_figures(wall: list[float], cpu: list[float]) -> tuple[str, str, str]:
    p50 = statistics.median(wall)
    return (f"p50 {p50:5.0f} ms  max {max(wall):5.0f} ms",
            f"target <= {START_TARGET_MS:.0f} ms (cpu p50 {statistics.median(cpu):.0f} ms)",
            f"{p50 / START_TARGET_MS:.2f}x")


async def measure(folder: Path) -> tuple[list[Start], list[float], list[float]]:
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
    byte_compile()
    with tempfile.TemporaryDirectory() as tmp:
        starts, to_pin, whole = asyncio.run(measure(Path(tmp)))
    print(f"MCP over stdio (edge-cli mcp -> control socket -> the door), {CALLS} pin_write calls")
    row("tool call -> pin changed", figures(to_pin))
    row("whole call (result with read-back)", figures(whole))
    row(f"edge-cli mcp start -> initialize (n={STARTS})",
        *start_figures([s.initialized for s in starts], [s.initialized_cpu for s in starts]))
    row(f"edge-cli mcp start -> tools listed (n={STARTS})",
        *start_figures([s.listed for s in starts], [s.listed_cpu for s in starts]))
    done = subprocess.run([sys.executable, "-m", "tests.mcp.big_result", "50000000"], cwd=ROOT,
                          capture_output=True, text=True, check=True, timeout=300)
    idle, peak, outcome = done.stdout.split()
    print("An MCP server's 50 MB result (stdio, sandboxed): the agent's RSS")
    row("idle", f"{int(idle) / 1024:.1f} MB")
    row(f"peak during the call ({outcome})", f"{int(peak) / 1024:.1f} MB",
        "<= idle + 20 MB", f"+{(int(peak) - int(idle)) / 1024:.1f} MB")
