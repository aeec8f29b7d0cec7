"""Under ``supervised`` autonomy an actuation from MCP waits for an admin's approval on the chat
channels (here the loopback Telegram API), as the model's do: it happens only once approved, a
denial is a tool error saying so, and nobody but an admin can answer."""

from __future__ import annotations

import asyncio

from mcp import types

from tests.fakes.telegram_server import FakeTelegram, telegram_config
from tests.helpers import until
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
