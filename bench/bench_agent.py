"""Agent overhead: time per tool-call iteration against a zero-latency model stub, and
dispatcher throughput with 50 concurrent senders (commands, and full model turns with
persisted sessions). Targets (issue 3): under 2 ms per iteration; at least 2,000 messages/s,
none lost. Baseline: the same loop of bare awaited stub calls, in the same process.

Warm turns through the running daemon (issue 16): `edge-cli run` answering lines on its
terminal channel from a loopback OpenAI-format model that answers at once, so the time is ours
(channel, dispatcher, session, prompt, the HTTP client; the loopback server's own HTTP handling is
counted too). Target under 20 ms. Before issue 16 every line first waited out the 300 ms chat
debounce."""

from __future__ import annotations

import asyncio
import os
import selectors
import statistics
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.process import BIN, row
from edge.agent.dispatch import Dispatcher
from edge.agent.pipeline import Agent, AgentSettings
from edge.agent.preflight import ChannelAccess, Preflight
from edge.agent.sessions import SessionStore
from edge.channels.base import Channel, ChannelMessage, SendMessage
from edge.config.model import Config
from edge.core.messages import ChatMessage, ToolCall, ToolSpec
from edge.hardware import build_hardware
from edge.providers.base import ChatResponse, Provider
from edge.tools.gpio import hardware_tools

ITERATIONS = 10
SENDERS = 50
PER_SENDER = 40


class ZeroLatencyModel(Provider):
    """Calls gpio_read until ITERATIONS rounds are done, then answers."""

    name = "stub"
    model = "stub"

    def __init__(self, tool_rounds: int) -> None:
        self.tool_rounds = tool_rounds
        self.calls = 0

    async def chat(self, messages: Sequence[ChatMessage], tools: list[ToolSpec] | None = None,
                   *, model: str | None = None) -> ChatResponse:
        self.calls += 1
        if self.calls % (self.tool_rounds + 1):
            return ChatResponse("", [ToolCall(f"c{self.calls}", "gpio_read", '{"pin": "led"}')])
        return ChatResponse("done")

    async def aclose(self) -> None:
        pass


class CountingChannel(Channel):
    name = "bench"

    def __init__(self) -> None:
        self.replies = 0

    async def send(self, message: SendMessage) -> None:
        self.replies += 1

    async def listen(self, bus: asyncio.Queue[ChannelMessage]) -> None:
        pass

    async def health_check(self) -> bool:
        return True


async def make_agent(state: Path, provider: Provider) -> Agent:
    config = Config()
    hardware = build_hardware(config, resident=True)
    await hardware.start()

    async def status() -> str:
        return ""

    access = {"bench": ChannelAccess({"*"}, rate_limit_per_minute=10**9)}
    settings = AgentSettings(max_tool_iterations=ITERATIONS + 1, workspace=state / "ws")
    # the bare stub, not a ModelSwitch over it: the figure is the agent's own overhead, without
    # the switch's retry and routing layers (and the bench sends no /model command)
    return Agent(hardware_tools(hardware), hardware, provider,  # type: ignore[arg-type]
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


WARM_UP_TURNS = 5
WARM_TURNS = 40


class DaemonOnPipes:
    """`edge-cli run` with its terminal channel on pipes: ``ask`` writes a line, reads the reply."""

    def __init__(self, env: dict[str, str]):
        self.proc = subprocess.Popen([str(BIN / "edge-cli"), "run"], env=env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.selector = selectors.DefaultSelector()
        assert self.proc.stdout is not None
        self.selector.register(self.proc.stdout, selectors.EVENT_READ)
        self.buffer = b""

    def ask(self, line: str, timeout: float = 20.0) -> str:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            if time.monotonic() > deadline or not self.selector.select(deadline - time.monotonic()):
                raise RuntimeError("the daemon did not answer")
            chunk = os.read(self.proc.stdout.fileno(), 65536)
            if not chunk:
                raise RuntimeError("the daemon closed its output")
            self.buffer += chunk
        reply, self.buffer = self.buffer.split(b"\n", 1)
        return reply.decode()

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait()


def warm_turns(state: Path) -> None:
    from tests.fakes.openai_server import OpenAIServer, completion

    def answer(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        return 200, completion("ok")

    with OpenAIServer(responder=answer) as server:
        env = {k: v for k, v in os.environ.items() if not k.startswith("EDGE_")}
        env.update(EDGE_STATE_DIR=str(state), HOME=str(state), XDG_CONFIG_HOME=str(state / "cfg"),
                   EDGE_MEMORY__EMBEDDER="none", EDGE_PROVIDER__BASE_URL=server.base_url,
                   EDGE_PROVIDER__MODEL="zero", EDGE_CHANNELS__CLI__RATE_LIMIT_PER_MINUTE="1000")
        daemon = DaemonOnPipes(env)
        try:
            for i in range(WARM_UP_TURNS):
                daemon.ask(f"warming up {i}")
            samples = []
            for i in range(WARM_TURNS):
                start = time.perf_counter()
                reply = daemon.ask(f"what is the state of the greenhouse, question {i}")
                samples.append(time.perf_counter() - start)
                assert reply == "ok", reply
        finally:
            daemon.close()
    samples.sort()
    p50, p95 = statistics.median(samples), samples[int(len(samples) * 0.95) - 1]
    row("warm turn through the daemon, p50 (model excluded)", f"{p50 * 1000:.1f} ms",
        "target < 20 ms", f"{p50 / 0.020:.2f}x")
    row("warm turn through the daemon, p95", f"{p95 * 1000:.1f} ms", "before: + 300 ms debounce")


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        warm_turns(Path(tmp) / "warm")
        asyncio.run(per_iteration(Path(tmp) / "a"))
        asyncio.run(throughput(Path(tmp) / "b", "/gpio led", "commands"))
        asyncio.run(throughput(Path(tmp) / "c", "message {i}", "model turns"))
