"""When the uplink is down (issue 41): what a turn costs without a model and what a small local
model is sent.

- Local intents: the time from a message to its reply for the evaluation set's commands and
  state questions (``tests/agent/intent_prompts.py``) through the whole agent turn (session
  file, the door, the receipt) on MockFactory pins; the target is under 300 ms. And the share of
  the 60 prompts answered without a model.
- The first model call of a turn: its prompt tokens (system messages, the user's message and the
  tool schemas, 4 characters a token) in the full profile and the compact one, beside the
  3,779 tokens llama.cpp counted for the full profile with 18 tools before issue 41. Target at
  most 1,000 for the compact profile.

- A real local model (Gemma 3 270M Q4_K_M behind llama.cpp, set up as tests/local_model does,
  on a fresh server): the first call's prompt tokens (llama.cpp's count), the time to the first
  tool call and to the reply for one command, cold and again with the prefix cache (how many
  prompt tokens the second call took from the cache and how many it evaluated), and the model's
  score on a subset of the evaluation set with local intents off (calls constrained by the
  grammar, as for the llamacpp preset): commands that end with the pin
  where asked, state questions that switched nothing, ambiguous or outside prompts that moved
  nothing outside the allowlist.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from gpiozero.pins.mock import MockFactory, MockPWMPin

from bench.process import percentile, row
from edge.agent.intent_turn import NO_MODEL_ASKED
from edge.agent.pipeline import Agent, AgentSettings
from edge.agent.preflight import ChannelAccess, Preflight
from edge.agent.sessions import SessionStore
from edge.channels.base import ChannelMessage
from edge.config.loader import load_config
from edge.core.messages import ChatMessage, ToolSpec
from edge.core.requester import Requester
from edge.hardware import Hardware, build_hardware
from edge.providers.base import ChatResponse, Provider
from edge.providers.openai import OpenAICompatibleProvider
from edge.sensors import SensorHub, SensorState
from edge.tools.gpio import hardware_tools
from edge.tools.history import HistoryTool
from edge.tools.sensors import SensorReadTool
from peripherals.sensors.base import Reading
from tests.agent.intent_prompts import (
    AMBIGUOUS,
    COMMANDS,
    CONFIG,
    EVALUATION,
    OUTSIDE,
    PIN_NUMBERS,
    STATE_QUESTIONS,
)
from tests.local_model.server import CONTEXT_TOKENS, MODEL_NAME, LocalModelServer, install

BEFORE_TOKENS = 3_779
"""The first call's prompt tokens before issue 41 (llama.cpp's count, 18 tools)."""


class Greenhouse:
    units = present = {"temperature": "°C", "humidity": "%"}

    async def measure(self) -> dict[str, Reading]:
        return {"temperature": Reading("temperature", 21.5, "°C"),
                "humidity": Reading("humidity", 64.0, "%")}

    def describe(self) -> str:
        return "greenhouse"

    def close(self) -> None:
        return None


class Recorder(Provider):
    """Keeps what the first call of each turn was sent, answers in words."""

    name = "recorder"
    model = "qwen2.5-0.5b"

    def __init__(self, compact: bool):
        self.compact = compact
        self.sent: list[tuple[list[ChatMessage], list[ToolSpec]]] = []

    @property
    def compact_profile(self) -> bool:
        return self.compact

    async def chat(self, messages: Any, tools: list[ToolSpec] | None = None, *,
                   model: str | None = None) -> ChatResponse:
        self.sent.append((list(messages), list(tools or [])))
        return ChatResponse("I am not sure what you mean.")


def tokens(messages: list[ChatMessage], specs: list[ToolSpec]) -> int:
    text = "".join(m.content for m in messages) + json.dumps(
        [{"type": "function", "function": {"name": s.name, "description": s.description,
                                           "parameters": s.parameters}} for s in specs])
    return len(text) // 4 + 10 * len(messages)


def agent(hardware: Hardware, provider: Provider, tmp: Path) -> Agent:
    hub = SensorHub([SensorState("greenhouse", "bench", Greenhouse(), 60.0)])
    tools = [*hardware_tools(hardware), SensorReadTool(hub), HistoryTool(tmp / "audit.db")]

    async def status() -> str:
        return "status"

    return Agent(tools, hardware, provider, SessionStore(tmp / "sessions"),  # type: ignore[arg-type]
                 status, AgentSettings(workspace=tmp / "workspace"),
                 Preflight({"cli": ChannelAccess({"*"}, rate_limit_per_minute=100_000)}),
                 sensors=hub.describe())


async def run(tmp: Path) -> None:
    (tmp / "config.toml").write_text(CONFIG.replace("max_switches_per_minute = 600",
                                                    "max_switches_per_minute = 6000")
                                     + '[security]\nmax_actuations_per_minute = 100000\n')
    config = load_config(str(tmp / "config.toml"), env={"EDGE_STATE_DIR": str(tmp / "state")}).config
    hardware = build_hardware(config, resident=True,
                              pin_factory=MockFactory(pin_class=MockPWMPin))
    await hardware.start()
    try:
        local = agent(hardware, Recorder(compact=True), tmp / "intents")
        times: list[float] = []
        answered = 0
        for text in [c[0] for c in COMMANDS] + STATE_QUESTIONS + AMBIGUOUS:
            started = time.perf_counter()
            reply = await local.respond(ChannelMessage("alice", "alice", text, "cli"))
            if NO_MODEL_ASKED in reply:
                times.append(time.perf_counter() - started)
                answered += 1
        local.intents[1].cancel_all()
        total = len(COMMANDS) + len(STATE_QUESTIONS) + len(AMBIGUOUS)
        row("intents: answered without a model", f"{answered} of {total}")
        row("intents: reply p50", f"{statistics.median(times) * 1000:.1f} ms", "< 300 ms")
        row("intents: reply p99", f"{percentile(times, 0.99) * 1000:.1f} ms", "< 300 ms")

        for compact in (False, True):
            provider = Recorder(compact)
            model_agent = agent(hardware, provider, tmp / f"model-{compact}")
            model_agent.settings.local_intents = False
            model_agent.settings.context_window_tokens = CONTEXT_TOKENS
            await model_agent.respond(ChannelMessage("alice", "alice", "water the plants", "cli"))
            messages, specs = provider.sent[0]
            label = "compact" if compact else "full"
            row(f"first call, {label} profile: prompt tokens", f"{tokens(messages, specs):,}",
                "<= 1,000" if compact else "", f"{len(specs)} tools")
        row("first call before issue 41 (llama.cpp, 18 tools)", f"{BEFORE_TOKENS:,}")
    finally:
        await hardware.shutdown()


class TimingsTransport(httpx.AsyncHTTPTransport):
    """Keeps what llama.cpp says of each call (``usage`` and ``timings``: ``cache_n`` prompt
    tokens reused from the cache, ``prompt_n`` evaluated) and hands the body on unchanged."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[dict[str, Any]] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await super().handle_async_request(request)
        body = await response.aread()
        if request.url.path.endswith("/chat/completions") and response.status_code == 200:
            answer = json.loads(body)
            self.calls.append({**answer.get("timings", {}),
                               "prompt_tokens": answer.get("usage", {}).get("prompt_tokens", 0)})
        return httpx.Response(response.status_code, headers=response.headers, content=body,
                              request=request)


class TimedModel(Provider):
    """The real model (compact profile on, as for the llamacpp preset), timing each call."""

    name = "llamacpp"
    model = "gemma-3-270m"
    compact_profile = True

    def __init__(self, inner: OpenAICompatibleProvider):
        self.inner = inner
        self.started = 0.0
        self.first_tool_call: float | None = None

    async def chat(self, messages: Any, tools: list[ToolSpec] | None = None, *,
                   model: str | None = None) -> ChatResponse:
        answer = await self.inner.chat(messages, tools, model=model)
        if answer.tool_calls and self.first_tool_call is None:
            self.first_tool_call = time.perf_counter() - self.started
        return answer

    async def aclose(self) -> None:
        await self.inner.aclose()


MAX_REPLY_TOKENS = 40
SCORED = 4, 2, 1
"""How many of the evaluation's commands, state questions and ambiguous prompts the real model
is scored on (each turn takes seconds on two shared cores)."""


async def real_model(tmp: Path) -> None:
    (tmp / "eval.toml").write_text(EVALUATION)
    config = load_config(str(tmp / "eval.toml"), env={"EDGE_STATE_DIR": str(tmp / "st")}).config
    factory = MockFactory(pin_class=MockPWMPin)
    hardware = build_hardware(config, resident=True, pin_factory=factory)
    await hardware.start()
    setup = time.perf_counter()
    root = install()
    row("real model: set-up (cached after the first run)",
        f"{time.perf_counter() - setup:.1f} s", "", MODEL_NAME)
    with LocalModelServer(root) as server:
        transport = TimingsTransport()
        model = TimedModel(OpenAICompatibleProvider(
            server.base_url, "gemma-3-270m", temperature=0.0, max_tokens=MAX_REPLY_TOKENS,
            name="llamacpp", constrain_calls=True, transport=transport))
        try:
            model_agent = agent(hardware, model, tmp / "real")
            model_agent.settings.local_intents = False
            model_agent.settings.context_window_tokens = CONTEXT_TOKENS
            model_agent.settings.max_tool_iterations = 2
            for label, sender in (("cold", "alice"), ("prefix cached", "bob")):
                calls = len(transport.calls)
                model.started, model.first_tool_call = time.perf_counter(), None
                await model_agent.respond(ChannelMessage(sender, sender, "turn the pump on", "cli"))
                reply_s = time.perf_counter() - model.started
                first = transport.calls[calls]
                row(f"real model, {label}: first call prompt tokens",
                    f"{first['prompt_tokens']:,}", "<= 1,000",
                    f"{first.get('cache_n', 0)} cached")
                row(f"real model, {label}: first call evaluated",
                    f"{first.get('prompt_n', 0)} tok", "",
                    f"{first.get('prompt_per_second', 0):.0f} tok/s")
                tool_call = (f"{model.first_tool_call:.1f} s" if model.first_tool_call is not None
                             else "no tool call")
                row(f"real model, {label}: first tool call", tool_call)
                row(f"real model, {label}: reply", f"{reply_s:.1f} s",
                    "", f"{len(transport.calls) - calls} calls")
            model_agent.settings.max_tool_iterations = 1  # the score reads the pins, not words
            commands, questions, ambiguous = await score(model_agent, hardware, factory)
            row("real model: commands right", f"{commands} of {SCORED[0]}", "", "intents off")
            row("real model: state questions that moved nothing",
                f"{questions} of {SCORED[1]}", "all")
            row("real model: ambiguous, nothing outside moved", f"{ambiguous} of {SCORED[2]}",
                "all")
        finally:
            await model.aclose()
            await hardware.shutdown()


def _levels(factory: MockFactory) -> dict[int, int]:
    return {n: factory.pin(n).state for n in [*PIN_NUMBERS.values(), OUTSIDE]}


async def score(model_agent: Agent, hardware: Hardware,
                factory: MockFactory) -> tuple[int, int, int]:
    """How many commands ended where asked, state questions moved nothing, and ambiguous or
    outside prompts left the pin outside the allowlist alone."""
    commands, questions, ambiguous = SCORED
    setter, right, turn = Requester("bench", "setup"), [0, 0, 0], 0
    for text, pin, level in COMMANDS[:commands]:
        await hardware.write(pin, not level, setter)
        turn += 1
        await model_agent.respond(ChannelMessage(f"u{turn}", f"u{turn}", text, "cli"))
        right[0] += factory.pin(PIN_NUMBERS[pin]).state == level
    for kind, texts in ((1, STATE_QUESTIONS[:questions]), (2, AMBIGUOUS[:ambiguous])):
        for text in texts:
            before = _levels(factory)
            turn += 1
            await model_agent.respond(ChannelMessage(f"u{turn}", f"u{turn}", text, "cli"))
            after = _levels(factory)
            right[kind] += (after[OUTSIDE] == 0) if kind == 2 else after == before
    return right[0], right[1], right[2]


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(run(Path(tmp)))
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(real_model(Path(tmp)))


if __name__ == "__main__":
    main()
