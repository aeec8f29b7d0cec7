"""Receipts: a reply to a turn that actuated or refused something ends with the agent's own line
of what the hardware did; a turn that touched no pin carries none; a reply claiming a switch
that no pin made is told so plainly; receipts can be turned off per channel."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from edge.agent.pipeline import Agent
from edge.agent.receipts import NOTHING_SWITCHED
from edge.config.loader import load_config
from edge.core.messages import ToolCall
from edge.providers.base import ChatResponse
from tests.fakes.scripted_provider import ScriptedProvider
from tests.helpers import msg


def scripted(replies: list[object]) -> ScriptedProvider:
    """A model that answers from ``replies`` (text, or a :class:`ChatResponse` with tool calls)."""
    return ScriptedProvider(replies)  # type: ignore[no-untyped-call]


def calls(*tools: tuple[str, dict[str, Any]]) -> ChatResponse:
    return ChatResponse("", [ToolCall(f"call-{i}", name, json.dumps(args))
                             for i, (name, args) in enumerate(tools)])


async def test_a_turn_that_switched_and_was_refused_ends_with_the_receipt(
        make_agent: Callable[..., Agent], mock_factory: Any) -> None:
    provider = scripted([
        calls(("gpio_write", {"pin": "led", "value": "on"}), ("gpio_write", {"pin": "GPIO5", "value": "on"})),
        "The LED is on; GPIO5 is not mine to switch."])
    reply = await make_agent(provider).respond(msg("light everything"))
    text, receipt = reply.rsplit("\n\n", 1)
    assert text == "The LED is on; GPIO5 is not mine to switch."
    assert receipt.startswith("Receipt: led: on (read back on) · GPIO5: refused, ")
    assert "not in the allowlist" in receipt
    assert mock_factory.pin(17).state == 1


async def test_a_turn_that_touched_no_pin_carries_no_receipt(make_agent: Callable[..., Agent]) -> None:
    provider = scripted([calls(("gpio_read", {"pin": "led"})), "The LED is off."])
    assert await make_agent(provider).respond(msg("tell me about the led")) == "The LED is off."


async def test_a_claimed_switch_without_an_actuation_is_told_plainly(
        make_agent: Callable[..., Agent], mock_factory: Any) -> None:
    provider = scripted(["I've turned the pump on for you."])
    reply = await make_agent(provider).respond(msg("water the plants"))
    assert reply == f"I've turned the pump on for you.\n\n{NOTHING_SWITCHED}"
    assert mock_factory.pin(17).state == 0


async def test_another_turns_actuations_are_not_in_this_receipt(
        make_agent: Callable[..., Agent]) -> None:
    agent = make_agent(scripted(["Nothing to do."]))
    assert await agent.command(msg("/gpio led on", sender="bob")) is not None
    assert await agent.respond(msg("hello")) == "Nothing to do."


async def test_receipts_off_for_a_channel(make_agent: Callable[..., Agent]) -> None:
    provider = scripted([calls(("gpio_write", {"pin": "led", "value": "on"})), "Done: I switched it on."])
    agent = make_agent(provider)
    agent.receipts_by_channel = {"cli": False}
    assert await agent.respond(msg("light")) == "Done: I switched it on."


def test_receipts_are_on_by_default_and_off_per_channel_in_config(
        write_config: Callable[[str], Path], isolated_env: dict[str, str]) -> None:
    from edge.assembly import AgentAssembly

    loaded = load_config(str(write_config("[channels.cli]\nreceipts = false\n")), env=isolated_env)
    assert loaded.config.agent.receipts is True
    assembly = AgentAssembly(loaded, resident=False)
    assert assembly._receipts_by_channel() == {"cli": False}


def test_the_mqtt_chat_topic_has_its_own_receipts_switch(
        write_config: Callable[[str], Path], isolated_env: dict[str, str]) -> None:
    from edge.assembly import AgentAssembly

    text = ('[mqtt]\nurl = "mqtt://127.0.0.1:1"\nchat = true\nchat_receipts = false\n'
            '[channels.telegram]\nreceipts = true\n')
    loaded = load_config(str(write_config(text)), env=isolated_env)
    assembly = AgentAssembly(loaded, resident=False)
    assert assembly._receipts_by_channel() == {"telegram": True, "mqtt": False}
