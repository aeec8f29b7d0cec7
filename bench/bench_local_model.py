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

A real local model's figures (time to the first tool call and to the reply, cold and with the
prefix cache) need a llama.cpp server, which ``make test`` does not install yet: this bench says
so rather than print a figure it did not measure.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from gpiozero.pins.mock import MockFactory, MockPWMPin

from bench.process import percentile, row
from edge.agent.intent_turn import NO_MODEL_ASKED
from edge.agent.pipeline import Agent, AgentSettings
from edge.agent.preflight import ChannelAccess, Preflight
from edge.agent.sessions import SessionStore
from edge.channels.base import ChannelMessage
from edge.config.loader import load_config
from edge.core.messages import ChatMessage, ToolSpec
from edge.hardware import Hardware, build_hardware
from edge.providers.base import ChatResponse, Provider
from edge.sensors import SensorHub, SensorState
from edge.tools.gpio import hardware_tools
from edge.tools.history import HistoryTool
from edge.tools.sensors import SensorReadTool
from peripherals.sensors.base import Reading
from tests.agent.intent_prompts import AMBIGUOUS, COMMANDS, CONFIG, STATE_QUESTIONS

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
            await model_agent.respond(ChannelMessage("alice", "alice", "water the plants", "cli"))
            messages, specs = provider.sent[0]
            label = "compact" if compact else "full"
            row(f"first call, {label} profile: prompt tokens", f"{tokens(messages, specs):,}",
                "<= 1,000" if compact else "", f"{len(specs)} tools")
        row("first call before issue 41 (llama.cpp, 18 tools)", f"{BEFORE_TOKENS:,}")
        row("real local model (llama.cpp, Qwen2.5 0.5B)", "not measured",
            "needs a llama.cpp server the project installs (issue 41, part 3)")
    finally:
        await hardware.shutdown()


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(run(Path(tmp)))


if __name__ == "__main__":
    main()
