"""The channel registry: every ``[channels.NAME]`` section has its spec, and the recipe in
edge/channels/README.md, followed: a channel written here and registered with one line is built
by the runtime, receives and answers, asks for approvals through the agent's one gate and
records the answer in it, and its admins join the admin table, with nothing else changed."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from edge.channels.base import Channel, ChannelMessage, SendMessage
from edge.channels.registry import CHANNELS, admin_table, enabled_channels, pairable, register
from edge.channels.spec import ApprovalAnswers, ChannelContext, ChannelSpec, ServiceCheck
from edge.config.channels import ChannelsConfig
from edge.config.model import Config
from edge.core.requester import Requester
from edge.doctor.remote import check_channels
from tests.fakes.openai_server import OpenAIServer, completion


class LoopSection:
    """The loop channel's settings (a channel with a config section reads it from ``config``)."""

    enabled = True
    admins = ["7"]

    def access(self) -> tuple[list[str], bool, int]:
        return ["7"], False, 20


class LoopChannel(Channel):
    """Messages put in ``inbox`` come from sender 7; replies land in ``sent``. It asks for
    approvals and answers them itself (``approve``), through the gate it was built with."""

    name = "loop"
    supports_approvals = True
    merges_bursts = False

    def __init__(self, approvals: ApprovalAnswers | None):
        self.approvals = approvals
        self.inbox: asyncio.Queue[str] = asyncio.Queue()
        self.sent: asyncio.Queue[str] = asyncio.Queue()
        self.asked: list[str] = []

    async def listen(self, bus: asyncio.Queue[ChannelMessage]) -> None:
        while True:
            text = await self.inbox.get()
            await bus.put(ChannelMessage("7", "7", text, self.name))

    async def send(self, message: SendMessage) -> None:
        await self.sent.put(message.content)

    async def health_check(self) -> bool:
        return True

    async def request_approval(self, ctx: Requester, prompt: str, token: str) -> None:
        self.asked.append(prompt)
        assert self.approvals is not None
        asyncio.get_running_loop().call_soon(self.approvals.answer, self.name, token,
                                              ctx.sender, "approve")


def build_loop(section: LoopSection, context: ChannelContext) -> Channel:
    return LoopChannel(context.approvals)


LOOP = ChannelSpec("loop", lambda config: LoopSection(), build_loop,
                   admins=lambda section: section.admins,
                   check=lambda table: ServiceCheck("ok", f"loop at {table['where']}"))


@pytest.fixture
def loop_channel():
    register(LOOP)  # the one line of the recipe
    yield
    del CHANNELS["loop"]


def test_every_channel_section_has_its_spec():
    config = Config()
    for name, field in ChannelsConfig.model_fields.items():
        assert isinstance(CHANNELS[name].section(config), field.annotation), name
    assert pairable() == ["telegram", "signal"]
    assert admin_table(config) == {"telegram": frozenset(), "signal": frozenset()}
    assert enabled_channels(config) == ["cli"]
    with pytest.raises(ValueError, match="registered already"):
        register(CHANNELS["cli"])


def test_a_registered_channel_is_in_the_tables_and_the_doctors_checks(loop_channel):
    config = Config()
    assert admin_table(config)["loop"] == frozenset({"7"})
    assert enabled_channels(config) == ["cli", "loop"]
    assert "loop" not in pairable()  # no allowlist key to pair into
    checks = check_channels({"channels": {"loop": {"where": "home"}}})
    assert [(c.name, c.status, c.detail) for c in checks] == [("loop", "ok", "loop at home")]


async def test_a_registered_channel_receives_and_answers_through_the_runtime(
        loop_channel, start_agent, mock_factory):
    agent = await start_agent("")
    loop = agent.runtime.channels["loop"]
    assert isinstance(loop, LoopChannel)
    assert agent.runtime.access["loop"].allowed == {"7"}
    await loop.inbox.put("/gpio led on")
    assert await asyncio.wait_for(loop.sent.get(), 5) == "gpio:GPIO17 (led) set on"
    assert mock_factory.pin(17).state == 1
    await loop.inbox.put("/status")
    assert "channel loop: up" in await asyncio.wait_for(loop.sent.get(), 5)


def scripted_model(body):
    """Asks to switch the LED on; then says what the tool answered."""
    last = body["messages"][-1]
    if last["role"] == "tool":
        return 200, completion(f"tool said: {last['content'][:200]}")
    return 200, completion(tool_calls=[{"name": "gpio_write",
                                        "arguments": {"pin": "led", "value": "on"}}])


async def test_a_registered_channel_asks_and_answers_through_the_one_gate(
        loop_channel, start_agent, mock_factory):
    with OpenAIServer(responder=scripted_model) as model:
        agent = await start_agent(f'[provider]\nbase_url = "{model.base_url}"\nmodel = "scripted"\n'
                                  '[security]\nautonomy = "supervised"\n')
        loop = agent.runtime.channels["loop"]
        assert isinstance(loop, LoopChannel)
        await loop.inbox.put("light up the led please")
        reply = await asyncio.wait_for(loop.sent.get(), 15)
    assert loop.asked == ["Approve: switch gpio:GPIO17 (led) on?"]
    assert "tool said" in reply and mock_factory.pin(17).state == 1


def test_a_spec_brings_its_channels_exposure_warning_and_receipts(monkeypatch):
    """``config check`` and ``doctor`` warn in the spec's words, and receipts come from the spec:
    no module outside the channel names it."""
    from edge.doctor.exposure import exposure_warnings

    spec: ChannelSpec[Any] = ChannelSpec(
        "loud", lambda config: config.channels.cli, lambda section, context: None,
        receipts=lambda section: False, exposure=lambda section: "channels.loud: anyone may talk")
    monkeypatch.setitem(CHANNELS, "loud", spec)
    assert exposure_warnings(Config()) == ["channels.loud: anyone may talk"]
    opened = Config.model_validate({"channels": {"signal": {"allowed_numbers": ["*"]}}})
    assert [w.split(":")[0] for w in exposure_warnings(opened)] == [
        'channels.signal.allowed_numbers = ["*"]', "channels.loud"]
    quiet = Config.model_validate({"mqtt": {"url": "mqtt://127.0.0.1", "chat_receipts": False}})
    answers = {s.name: s.receipts(s.section(quiet)) for s in CHANNELS.values() if s.receipts}
    assert answers == {"cli": None, "telegram": None, "signal": None, "mqtt": False, "loud": False}
