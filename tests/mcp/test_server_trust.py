"""Trust per caller over MCP: a pin with ``approval = false`` and a token's ``[mcp.trust]`` let
exactly what they say through without a prompt to the chat admins, and nothing else; with
``[mcp] ask_at_client = true`` the person at a client that declared elicitation is asked instead
(accept switches, decline refuses), and a client without it is asked through the admins."""

from __future__ import annotations

import asyncio

from mcp import types

from tests.fakes.telegram_server import FakeTelegram, telegram_config
from tests.mcp.http_agent import free_port, http_session, until_listening
from tests.mcp.test_server_approvals import CLAUDE, OTHER, next_prompt, press, prompts_to
from tests.mcp.test_server_stdio import text

PINS = """
[boards.gpio.aliases]
led = "GPIO17"
fan = "GPIO27"
[boards.gpio.pins]
led = { mode = "output", safe = "off" }
fan = { mode = "output", safe = "off", approval = false }
"""


def config(telegram: FakeTelegram, port: int, mcp_extra: str = "") -> str:
    extra = 'admins = ["42"]\n[security]\nautonomy = "supervised"\napproval_timeout_seconds = 30\n'
    return (telegram_config(telegram, extra) + PINS
            + f'[mcp]\nlisten = "127.0.0.1:{port}"\n{mcp_extra}'
            + f'[mcp.tokens]\nclaude = "{CLAUDE}"\nother = "{OTHER}"\n'
            + '[mcp.trust]\nclaude = ["gpio:GPIO17"]\n')


async def switch(session, pin: str, value: str = "on") -> types.CallToolResult:
    return await asyncio.wait_for(session.call_tool("pin_write", {"pin": pin, "value": value}), 15)


async def test_a_trusted_pin_and_a_trusted_token_pass_and_nothing_else(
        telegram, start_agent, mock_factory):
    port = free_port()
    await start_agent(config(telegram, port))
    await until_listening(port)
    async with http_session(port, CLAUDE) as claude, http_session(port, OTHER) as other:
        assert not (await switch(other, "fan")).is_error  # approval = false: anyone's model
        assert mock_factory.pin(27).state == 1
        assert not (await switch(claude, "led")).is_error  # [mcp.trust] claude: this pin
        assert mock_factory.pin(17).state == 1
        assert prompts_to(telegram, 42) == []
        assert not (await switch(claude, "led", "off")).is_error
        call = asyncio.create_task(switch(other, "led"))  # other's token is not trusted
        prompt = await next_prompt(telegram, 42, 0)
        assert prompt["text"].startswith("Approve: switch gpio:GPIO17 (led) on?")
        press(telegram, 42, prompt, "Deny")
        denied = await call
    assert denied.is_error and "denied by the user" in text(denied)
    assert mock_factory.pin(17).state == 0 and len(prompts_to(telegram, 42)) == 1


def answering(action: str, always: bool = False):
    """An elicitation callback that answers ``action``, recording what it was asked."""
    asked: list[types.ElicitRequestParams] = []

    async def callback(context, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params)
        content = {"always": always} if action == "accept" else None
        return types.ElicitResult(action=action, content=content)
    callback.asked = asked  # type: ignore[attr-defined]
    return callback


async def test_the_person_at_the_client_accepts_and_the_pin_switches(
        telegram, start_agent, mock_factory):
    port = free_port()
    await start_agent(config(telegram, port, "ask_at_client = true\n"))
    await until_listening(port)
    accept = answering("accept")
    async with http_session(port, OTHER, elicitation=accept) as other:
        done = await switch(other, "led")
    assert not done.is_error, text(done)
    assert mock_factory.pin(17).state == 1
    assert [p.message for p in accept.asked] == ["Approve: switch gpio:GPIO17 (led) on?"]
    assert "always" in accept.asked[0].requested_schema["properties"]  # a token verified it
    assert prompts_to(telegram, 42) == []  # no chat admin was asked


async def test_always_at_the_client_covers_that_token_until_restart(
        telegram, start_agent, mock_factory):
    port = free_port()
    await start_agent(config(telegram, port, "ask_at_client = true\n"))
    await until_listening(port)
    always = answering("accept", always=True)
    async with http_session(port, OTHER, elicitation=always) as other:
        assert not (await switch(other, "led")).is_error
        assert not (await switch(other, "led", "off")).is_error  # "write" on led: remembered
    assert len(always.asked) == 1 and mock_factory.pin(17).state == 0


async def test_a_decline_at_the_client_refuses_and_nothing_moves(
        telegram, start_agent, mock_factory):
    port = free_port()
    await start_agent(config(telegram, port, "ask_at_client = true\n"))
    await until_listening(port)
    decline = answering("decline")
    async with http_session(port, OTHER, elicitation=decline) as other:
        done = await switch(other, "led")
    assert done.is_error and "declined at the MCP client" in text(done)
    assert len(decline.asked) == 1 and mock_factory.pin(17).state == 0
    assert prompts_to(telegram, 42) == []


async def test_a_client_without_elicitation_is_asked_through_the_chat_admins(
        telegram, start_agent, mock_factory):
    port = free_port()
    await start_agent(config(telegram, port, "ask_at_client = true\n"))
    await until_listening(port)
    async with http_session(port, OTHER) as other:  # declares no elicitation capability
        call = asyncio.create_task(switch(other, "led"))
        press(telegram, 42, await next_prompt(telegram, 42, 0), "Approve")
        done = await call
    assert not done.is_error and mock_factory.pin(17).state == 1


async def test_without_ask_at_client_the_admins_are_asked_even_if_the_client_could_be(
        telegram, start_agent, mock_factory):
    port = free_port()
    await start_agent(config(telegram, port))
    await until_listening(port)
    accept = answering("accept")
    async with http_session(port, OTHER, elicitation=accept) as other:
        call = asyncio.create_task(switch(other, "led"))
        press(telegram, 42, await next_prompt(telegram, 42, 0), "Deny")
        done = await call
    assert done.is_error and accept.asked == [] and mock_factory.pin(17).state == 0
