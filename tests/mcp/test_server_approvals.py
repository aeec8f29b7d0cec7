"""Under ``supervised`` autonomy an actuation from MCP waits for an admin's approval on the chat
channels (here the loopback Telegram API), as the model's do: it happens only once approved, a
denial is a tool error saying so, and nobody but an admin can answer. An admin's *Always* is
remembered for what verified the caller (its bearer token; over the socket the local uid with
the client's name), never for the name a client gives itself: a client nothing verified is never
offered *Always* and is not covered by another's."""

from __future__ import annotations

import asyncio

from mcp import types

from tests.fakes.telegram_server import FakeTelegram, telegram_config
from tests.helpers import until
from tests.mcp.http_agent import free_port, http_session, until_listening
from tests.mcp.test_server_stdio import mcp_session, text

PINS = """
[boards.gpio.aliases]
led = "GPIO17"
[boards.gpio.pins]
led = { mode = "output", safe = "off" }
"""



def config(telegram: FakeTelegram) -> str:
    extra = 'admins = ["42"]\n[security]\nautonomy = "supervised"\napproval_timeout_seconds = 30\n'
    return telegram_config(telegram, extra) + PINS


async def prompt_to(telegram: FakeTelegram, chat: int) -> dict:
    asked = await until(lambda: [p for p in telegram.sent() if "reply_markup" in p
                                 and str(p["chat_id"]) == str(chat)])
    return asked[-1]


def press(telegram: FakeTelegram, user: int, prompt: dict, label: str) -> None:
    buttons = prompt["reply_markup"]["inline_keyboard"][0]
    data = next(b["callback_data"] for b in buttons if b["text"] == label)
    message = {"message_id": 5, "chat": {"id": int(prompt["chat_id"]), "type": "private"},
               "text": prompt["text"]}
    telegram.push_callback(user, data, message)


async def test_an_mcp_actuation_waits_for_the_admin_and_happens_once_approved(
        telegram, start_agent, write_config, isolated_env, mock_factory):
    await start_agent(config(telegram))
    env = {**isolated_env, "EDGE_CONFIG": str(write_config(config(telegram)))}
    async with mcp_session(env, client="claude-code") as session:
        call = asyncio.create_task(session.call_tool("pin_write", {"pin": "led", "value": "on"}))
        prompt = await prompt_to(telegram, 42)
        assert prompt["text"].startswith("Approve: switch gpio:GPIO17 (led) on?")
        assert "mcp:claude-code" in prompt["text"]
        assert mock_factory.pin(17).state == 0 and not call.done()
        press(telegram, 43, prompt, "Approve")  # allowed on the chat, but not an admin
        refusal = await until(lambda: telegram.sent("answerCallbackQuery"))
        assert "Only the person who asked (or an admin)" in refusal[0]["text"]
        assert mock_factory.pin(17).state == 0 and not call.done()
        press(telegram, 42, prompt, "Approve")
        done: types.CallToolResult = await asyncio.wait_for(call, 15)
        assert not done.is_error, text(done)
        assert mock_factory.pin(17).state == 1


async def test_a_denied_mcp_actuation_is_a_tool_error_and_nothing_moves(
        telegram, start_agent, write_config, isolated_env, mock_factory):
    await start_agent(config(telegram))
    env = {**isolated_env, "EDGE_CONFIG": str(write_config(config(telegram)))}
    async with mcp_session(env) as session:
        call = asyncio.create_task(session.call_tool("pin_write", {"pin": "led", "value": "on"}))
        press(telegram, 42, await prompt_to(telegram, 42), "Deny")
        done = await asyncio.wait_for(call, 15)
        assert done.is_error and "denied by the user" in text(done)
        assert mock_factory.pin(17).state == 0


async def test_with_no_admin_to_ask_the_actuation_is_refused(telegram, start_agent, write_config,
                                                             isolated_env, mock_factory):
    no_admin = telegram_config(telegram, '[security]\nautonomy = "supervised"\n') + PINS
    await start_agent(no_admin)
    env = {**isolated_env, "EDGE_CONFIG": str(write_config(no_admin))}
    async with mcp_session(env) as session:
        done = await session.call_tool("pin_write", {"pin": "led", "value": "on"})
        read = await session.call_tool("pin_read", {"pin": "led"})
    assert done.is_error and "approval needed, but channel mcp cannot ask for it" in text(done)
    assert not read.is_error  # reading needs no approval
    assert mock_factory.pin(17).state == 0


# *Always* is remembered for what verified the caller, never for the name it gives itself ------

CLAUDE = "claude-secret-0123456789"
OTHER = "other-secret-0123456789"


def with_http(telegram: FakeTelegram, port: int, tokens: bool) -> str:
    table = f'[mcp.tokens]\nclaude = "{CLAUDE}"\nother = "{OTHER}"\n' if tokens else ""
    return config(telegram) + f'[mcp]\nlisten = "127.0.0.1:{port}"\n{table}'


def prompts_to(telegram: FakeTelegram, chat: int) -> list[dict]:
    return [p for p in telegram.sent() if "reply_markup" in p and str(p["chat_id"]) == str(chat)]


async def next_prompt(telegram: FakeTelegram, chat: int, seen: int) -> dict:
    """The prompt after the first ``seen`` to ``chat``."""
    return (await until(lambda: prompts_to(telegram, chat)[seen:]))[0]


def labels(prompt: dict) -> list[str]:
    return [b["text"] for b in prompt["reply_markup"]["inline_keyboard"][0]]


async def switch(session, value: str) -> types.CallToolResult:
    return await asyncio.wait_for(
        session.call_tool("pin_write", {"pin": "led", "value": value}), 15)


async def test_always_for_a_token_covers_that_token_and_no_other(
        telegram, start_agent, mock_factory):
    port = free_port()
    await start_agent(with_http(telegram, port, tokens=True))
    await until_listening(port)
    async with (http_session(port, CLAUDE) as claude,
                http_session(port, OTHER, client="claude") as other):  # names itself as the first
        call = asyncio.create_task(switch(claude, "on"))
        prompt = await next_prompt(telegram, 42, 0)
        assert labels(prompt) == ["Approve", "Deny", "Always"]
        assert "asked over MCP by mcp:claude, http)" in prompt["text"]
        press(telegram, 42, prompt, "Always")
        assert not (await call).is_error and mock_factory.pin(17).state == 1
        assert not (await switch(claude, "off")).is_error  # remembered: no prompt
        assert mock_factory.pin(17).state == 0 and len(prompts_to(telegram, 42)) == 1
        call = asyncio.create_task(switch(other, "on"))
        prompt = await next_prompt(telegram, 42, 1)
        assert "asked over MCP by mcp:other, http)" in prompt["text"]
        press(telegram, 42, prompt, "Deny")
        denied = await call
    assert denied.is_error and "denied by the user" in text(denied)
    assert mock_factory.pin(17).state == 0


async def test_a_client_that_only_named_itself_is_never_offered_always_nor_covered(
        telegram, start_agent, write_config, isolated_env, mock_factory):
    port = free_port()
    await start_agent(with_http(telegram, port, tokens=False))
    await until_listening(port)
    env = {**isolated_env, "EDGE_CONFIG": str(write_config(with_http(telegram, port, False)))}
    async with mcp_session(env, client="Claude Desktop") as desktop:  # verified: this uid
        call = asyncio.create_task(switch(desktop, "on"))
        prompt = await next_prompt(telegram, 42, 0)
        assert labels(prompt) == ["Approve", "Deny", "Always"]
        assert "asked over MCP by mcp:claude-desktop, local:" in prompt["text"]
        press(telegram, 42, prompt, "Always")
        assert not (await call).is_error
        assert not (await switch(desktop, "off")).is_error  # remembered for this uid and name
    assert len(prompts_to(telegram, 42)) == 1 and mock_factory.pin(17).state == 0
    async with http_session(port, None, client="Claude Desktop") as impostor:  # the same name
        call = asyncio.create_task(switch(impostor, "on"))
        prompt = await next_prompt(telegram, 42, 1)
        assert labels(prompt) == ["Approve", "Deny"]
        assert "asked over MCP by mcp:claude-desktop, http; it only named itself)" in prompt["text"]
        token = prompt["reply_markup"]["inline_keyboard"][0][0]["callback_data"].split(":")[1]
        message = {"message_id": 5, "chat": {"id": 42, "type": "private"}, "text": prompt["text"]}
        answered = len(telegram.sent("answerCallbackQuery"))
        telegram.push_callback(42, f"appr:{token}:always", message)  # a button it was not given
        refusal = await until(lambda: telegram.sent("answerCallbackQuery")[answered:])
        assert "Always is not offered here" in refusal[0]["text"]
        assert mock_factory.pin(17).state == 0 and not call.done()
        press(telegram, 42, prompt, "Deny")
        denied = await call
    assert denied.is_error and "denied by the user" in text(denied)
    assert mock_factory.pin(17).state == 0
