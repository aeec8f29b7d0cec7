"""The world a scenario runs the agent in, all in process: the config's boards and sensors
simulated (:func:`edge.config.simulation.simulated`), a state directory of its own, a
:class:`~edge.automation.clock.ManualClock`, each chat channel a :class:`ScenarioChannel` that
hears the scenario's people and keeps what the agent sends them, and the model a
:class:`ScriptedModel` playing the turns the scenario wrote. No broker, no network, no model.

The agent is the real :class:`~edge.runtime.Runtime`: the door to the pins, the policy, the
interlocks, rules, schedules, the audit trail and the chat pipeline are the ones that will run
on the Pi.
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import json
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

from edge.agent.preflight import ChannelAccess
from edge.automation.clock import SETTLE_ROUNDS, ManualClock
from edge.channels.base import Channel, ChannelMessage, SendMessage
from edge.channels.registry import CHANNELS
from edge.config.loader import LoadedConfig
from edge.config.simulation import simulated
from edge.core.messages import ChatMessage, ToolCall, ToolSpec
from edge.core.requester import Requester
from edge.providers.base import ChatResponse, Provider
from edge.runtime import Runtime
from edge.scenario.steps import ModelTurn


class ScenarioClock(ManualClock):
    """The manual clock, settling only as long as something is ready to run: a week of the
    scheduler's 30-second naps costs milliseconds, not seconds. (CPython's loop keeps what is
    ready in ``_ready``; another loop without it gets the manual clock's full settling.)
    Nothing steps its wall clock, so the scheduler's check for a step comes once an hour."""

    step_check = timedelta(hours=1)

    async def settle(self) -> None:
        loop = asyncio.get_running_loop()
        ready = getattr(loop, "_ready", None)
        if ready is None:
            await super().settle()
            return
        for _ in range(SETTLE_ROUNDS):
            await asyncio.sleep(0)
            if not ready:
                return


class ScenarioChannel(Channel):
    """A chat channel in memory: :meth:`hear` is a person writing, :attr:`sent` what the agent
    sent (replies, notifications), each as (recipient, text). An approval prompt is answered
    at once (``answer``: approve, as the person who asked would)."""

    supports_approvals = True
    merges_bursts = False

    def __init__(self, name: str, runtime: Runtime):
        self.name = name
        self.runtime = runtime
        self.sent: list[tuple[str, str]] = []
        self.prompts: list[tuple[str, str]] = []
        """Approval prompts, each answered at once as the step said."""
        self.changed = asyncio.Event()
        self.answer = "approve"
        self._bus: asyncio.Queue[ChannelMessage] | None = None
        self._ready = asyncio.Event()

    async def listen(self, bus: asyncio.Queue[ChannelMessage]) -> None:
        self._bus = bus
        self._ready.set()
        await asyncio.Event().wait()  # until the runtime stops the listener

    async def hear(self, sender: str, text: str) -> None:
        await self._ready.wait()
        assert self._bus is not None
        await self._bus.put(ChannelMessage(sender, sender, text, self.name))

    async def send(self, message: SendMessage) -> None:
        self.sent.append((message.recipient, message.content))
        self.changed.set()

    async def health_check(self) -> bool:
        return True

    async def request_approval(self, ctx: Requester, prompt: str, token: str,
                               always: bool = False) -> None:
        self.prompts.append((ctx.reply_target or ctx.sender, prompt))
        loop = asyncio.get_running_loop()
        loop.call_soon(self.runtime.approvals.answer, self.name, token, ctx.sender, self.answer)

    async def approval_expired(self, ctx: Requester, token: str) -> None:
        return None


class ScriptedModel(Provider):
    """The model, played from the scenario: each chat step's ``model`` turns in order (a tool
    call, then what it says); a turn nobody scripted says so."""

    def __init__(self) -> None:
        self.turns: list[ModelTurn] = []
        self._ids = itertools.count(1)

    @property
    def name(self) -> str:
        return "scenario"

    @property
    def model(self) -> str:
        return "scripted"

    async def chat(self, messages: Sequence[ChatMessage], tools: list[ToolSpec] | None = None,
                   *, model: str | None = None) -> ChatResponse:
        if not self.turns:
            return ChatResponse("(the scenario scripted no model turn here)", model="scripted")
        turn = self.turns.pop(0)
        if turn.call is not None:
            call = ToolCall(f"call-{next(self._ids)}", turn.call, json.dumps(turn.args))
            return ChatResponse(turn.say or "", [call], model="scripted")
        return ChatResponse(turn.say or "", model="scripted")


def scenario_config(loaded: LoadedConfig, state_dir: Path) -> LoadedConfig:
    """The config as written, simulated, in ``state_dir``: no broker, no MCP listener, no
    outside MCP servers, keyword memory, and no debounce wait before a turn."""
    config = simulated(loaded.config)
    update: dict[str, Any] = {
        "paths": config.paths.model_copy(update={"state_dir": str(state_dir)}),
        "mqtt": config.mqtt.model_copy(update={"url": ""}),
        "memory": config.memory.model_copy(update={"embedder": "none"}),
        "agent": config.agent.model_copy(update={"debounce_ms": 0}),
        "mcp": config.mcp.model_copy(update={"listen": "", "servers": []}),
    }
    return dataclasses.replace(loaded, config=config.model_copy(update=update))


class ScenarioRuntime(Runtime):
    """The agent, with the scenario's channels and model in place of the network's."""

    def __init__(self, loaded: LoadedConfig, clock: ManualClock, people_channels: set[str],
                 stdin: Any):
        super().__init__(loaded, resident=True, clock=clock, stdin=stdin)
        self.people_channels = people_channels
        self.scenario_channels: dict[str, ScenarioChannel] = {}
        self.model = ScriptedModel()

    def build_channels(self) -> None:
        for spec in CHANNELS.values():
            section = spec.section(self.config)
            allowed, mention, rate = section.access()
            self.access[spec.name] = ChannelAccess(set(map(str, allowed)), mention, rate)
            if spec.name == "cli" or not (section.enabled or spec.name in self.people_channels):
                continue
            channel = ScenarioChannel(spec.name, self)
            self.scenario_channels[spec.name] = self.channels[spec.name] = channel

    def start_provider(self) -> None:
        from edge.providers.switch import Endpoint, ModelSwitch

        info = {"kind": "scripted", "base_url": "", "role": "primary"}
        self.provider = ModelSwitch([Endpoint("scenario", self.model, "scripted", [], info)])

    async def start_mqtt(self) -> None:
        return None

    async def start_mcp_servers(self) -> None:
        return None
