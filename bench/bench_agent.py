"""Agent overhead: time per tool-call iteration against a zero-latency model stub, and
dispatcher throughput with 50 concurrent senders (commands, and full model turns with
persisted sessions). Targets (issue 3): under 2 ms per iteration; at least 2,000 messages/s,
none lost. Baseline: the same loop of bare awaited stub calls, in the same process."""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path

from bench.process import row
from edge.agent.dispatch import Dispatcher
from edge.agent.pipeline import Agent, AgentSettings
from edge.agent.preflight import ChannelAccess, Preflight
from edge.agent.sessions import SessionStore
from edge.channels.base import Channel, ChannelMessage
from edge.config.model import Config
from edge.hardware import build_hardware
from edge.messages import ToolCall
from edge.providers.base import ChatResponse, Provider
from edge.tools.gpio import hardware_tools

ITERATIONS = 10
SENDERS = 50
PER_SENDER = 40


class ZeroLatencyModel(Provider):
    """Calls gpio_read until ITERATIONS rounds are done, then answers."""

    name = "stub"
    model = "stub"

    def __init__(self, tool_rounds: int):
        self.tool_rounds = tool_rounds
        self.calls = 0

    async def chat(self, messages, tools=None, *, model=None):
        self.calls += 1
        if self.calls % (self.tool_rounds + 1):
            return ChatResponse("", [ToolCall(f"c{self.calls}", "gpio_read", '{"pin": "led"}')])
        return ChatResponse("done")

    async def aclose(self):
        pass


class CountingChannel(Channel):
    name = "bench"

    def __init__(self):
        self.replies = 0

    async def send(self, message):
        self.replies += 1

    async def listen(self, bus):
        pass

    async def health_check(self):
        return True


async def make_agent(state: Path, provider) -> Agent:
    config = Config()
    hardware = build_hardware(config, resident=True)
    await hardware.start()

    async def status():
        return ""

    access = {"bench": ChannelAccess(frozenset({"*"}), rate_limit_per_minute=10**9)}
    settings = AgentSettings(max_tool_iterations=ITERATIONS + 1, workspace=state / "ws")
    return Agent(hardware_tools(hardware), hardware, provider,
                 SessionStore(state / "sessions"), status, settings, Preflight(access))


async def per_iteration(state: Path) -> None:
    provider = ZeroLatencyModel(ITERATIONS)
    agent = await make_agent(state, provider)
    turns = 30
    msgs = [ChannelMessage("u", "u", f"go {i}", "bench") for i in range(turns)]
    await agent.respond(msgs[0])  # warm-up
    start = time.perf_counter()
    for m in msgs[1:]:
        await agent.respond(m)
    elapsed = (time.perf_counter() - start) / (turns - 1)
    stub = ZeroLatencyModel(ITERATIONS)
    base_start = time.perf_counter()
    for _ in range((turns - 1) * (ITERATIONS + 1)):
        await stub.chat([])
    baseline = (time.perf_counter() - base_start) / ((turns - 1) * (ITERATIONS + 1))
    per_iter = elapsed / (ITERATIONS + 1)
    row("baseline: bare stub call", f"{baseline * 1e6:.1f} us")
    row("agent overhead per tool-call iteration", f"{per_iter * 1000:.3f} ms", "target < 2 ms",
        f"{per_iter / 0.002:.2f}x")
    row("whole turn (10 tool rounds + answer, persisted)", f"{elapsed * 1000:.2f} ms")
    await agent.hardware.shutdown()


async def throughput(state: Path, text: str, label: str) -> None:
    agent = await make_agent(state, ZeroLatencyModel(0))
    channel = CountingChannel()
    # interruption off: each sender's burst would otherwise (rightly) cancel its own older turns
    dispatcher = Dispatcher(agent, {"bench": channel}, debounce_seconds=0.0,
                            interrupt_on_new_message=False)
    task = asyncio.create_task(dispatcher.run())
    total = SENDERS * PER_SENDER

    async def sender(n: int) -> None:
        for i in range(PER_SENDER):
            await dispatcher.bus.put(ChannelMessage(f"s{n}", f"s{n}", text.format(i=i), "bench",
                                                    id=f"{n}-{i}"))

    start = time.perf_counter()
    await asyncio.gather(*(sender(n) for n in range(SENDERS)))
    await dispatcher.drain()
    elapsed = time.perf_counter() - start
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    rate = total / elapsed
    row(f"dispatcher, 50 senders, {label}", f"{rate:,.0f} msg/s", "target >= 2,000/s",
        f"{rate / 2000:.2f}x")
    row(f"  replies / messages ({label})", f"{channel.replies}/{total}",
        "none lost" if channel.replies == total else "LOST")
    await agent.hardware.shutdown()


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(per_iteration(Path(tmp) / "a"))
        asyncio.run(throughput(Path(tmp) / "b", "/gpio led", "commands"))
        asyncio.run(throughput(Path(tmp) / "c", "message {i}", "model turns"))
