"""Telegram under attack, end to end against the loopback Bot API: whatever strangers send (flood
limits, a blocked bot, stale buttons, malformed updates, a poison update), the poll loop keeps
going, nothing is replayed, and an allowed user's `/gpio led on` still works within 2 s."""

from __future__ import annotations

import asyncio
import logging
import random

from edge.channels.pairing import PairingCodes
from tests.fakes.telegram_server import FakeTelegram, texts_to
from tests.fakes.telegram_server import telegram_config as config
from tests.fakes.telegram_updates import MALFORMED, callback, message, mutate
from tests.helpers import until

LED_ON = "gpio:GPIO17 (led) set on"
WRONG = "That pairing code is wrong or has expired."



def delivered_to(server: FakeTelegram, chat_id) -> list[str]:
    return [p["text"] for p in server.delivered if str(p["chat_id"]) == str(chat_id)]


async def polling(agent) -> None:
    await until(lambda: agent.runtime.channels["telegram"].last_poll)


async def led_on_within_2s(server: FakeTelegram, mock_factory) -> None:
    server.push_message(42, "/gpio led on")
    await until(lambda: LED_ON in delivered_to(server, 42), timeout=2.0)
    assert mock_factory.pin(17).state == 1


async def test_malformed_updates_are_skipped_once_and_the_allowed_user_still_works(
        telegram, start_agent, mock_factory, tmp_path, caplog):
    assert len(MALFORMED) >= 20
    agent = await start_agent(config(telegram))
    await polling(agent)
    caplog.set_level(logging.INFO, logger="edge.channels")
    ids = telegram.push_raw(*[dict(update) for update in MALFORMED.values()])
    await led_on_within_2s(telegram, mock_factory)
    assert delivered_to(telegram, 42) == [LED_ON]  # no spoofed "/gpio led on" got through
    offset = int((tmp_path / "state" / "telegram" / "offset").read_text())
    assert offset == max(ids) + 2  # past every shape, and past the real command
    ignored = [r for r in caplog.records if r.getMessage().startswith("telegram_update_ignored")]
    assert sorted(int(r.getMessage().split("update_id=")[1].split()[0]) for r in ignored) == ids
    assert not [r for r in caplog.records if "telegram_update_failed" in r.getMessage()]
    assert agent.runtime.supervisors["telegram"].restarts == 0


async def test_pair_guesses_until_the_flood_limit_answers_429(telegram, start_agent, mock_factory):
    telegram.flood_limit = (3, 30.0)
    agent = await start_agent(config(telegram))
    await polling(agent)
    for guess in range(8):
        telegram.push_message(7, f"/pair WRONG{guess:03d}")
        await asyncio.sleep(0.15)
    await led_on_within_2s(telegram, mock_factory)
    assert delivered_to(telegram, 7) == [WRONG] * 3
    assert len(texts_to(telegram, 7)) == 4  # the 4th got 429; the chat is then left alone
    assert telegram.flood_violations == []
    assert agent.runtime.supervisors["telegram"].restarts == 0


async def test_a_stranger_who_blocked_the_bot_does_not_wedge_it(telegram, start_agent,
                                                                 mock_factory):
    telegram.blocked = {7}
    agent = await start_agent(config(telegram))
    await polling(agent)
    telegram.push_message(7, "hello")
    telegram.push_message(7, "/pair WRONG123")
    await until(lambda: len(texts_to(telegram, 7)) == 2)
    await led_on_within_2s(telegram, mock_factory)
    assert delivered_to(telegram, 7) == []
    assert agent.runtime.supervisors["telegram"].restarts == 0


async def test_a_stale_approval_button_does_not_wedge_it(telegram, start_agent, mock_factory):
    agent = await start_agent(config(telegram))
    await polling(agent)
    button = {"message_id": 5, "chat": {"id": 42, "type": "private"}, "text": "Approve: switch led on?"}
    telegram.push_callback(42, "appr:0123abcd:approve", button, stale=True)
    await until(lambda: telegram.sent("answerCallbackQuery"))
    await led_on_within_2s(telegram, mock_factory)
    assert agent.runtime.supervisors["telegram"].restarts == 0


async def test_a_poison_update_is_skipped_and_never_replayed(telegram, start_agent, mock_factory,
                                                             monkeypatch, caplog):
    handled: list[str] = []

    async def poisoned(self, sender, chat, text, is_group):
        handled.append(text)
        raise RuntimeError("poison")

    monkeypatch.setattr("edge.channels.telegram.TelegramChannel._unknown_sender", poisoned)
    caplog.set_level(logging.INFO, logger="edge.channels")
    agent = await start_agent(config(telegram))
    await polling(agent)
    telegram.push_message(7, "poison")
    await led_on_within_2s(telegram, mock_factory)
    assert handled == ["poison"]
    assert len([r for r in caplog.records if "telegram_update_failed" in r.getMessage()]) == 1
    await agent.stop()
    agent = await start_agent(config(telegram))  # a restart does not replay it either
    telegram.push_message(42, "/gpio led")
    await until(lambda: len(delivered_to(telegram, 42)) == 2)
    assert handled == ["poison"]


async def test_429_on_a_send_delays_that_chat_only(telegram, start_agent):
    telegram.flood_limit = (1, 3.0)
    agent = await start_agent(config(telegram))
    await polling(agent)
    telegram.push_message(42, "/gpio led")
    await until(lambda: delivered_to(telegram, 42))
    telegram.push_message(42, "/pins")  # chat 42 is over its limit: 429, retry after ~3 s
    await until(lambda: len(texts_to(telegram, 42)) == 2)
    telegram.push_message(43, "/gpio led")
    await until(lambda: delivered_to(telegram, 43), timeout=1.0)  # another chat is not held
    assert len(delivered_to(telegram, 42)) == 1
    await until(lambda: len(delivered_to(telegram, 42)) == 2, timeout=6.0)
    assert telegram.flood_violations == []  # chat 42 was not retried before retry_after


async def test_too_many_wrong_codes_from_one_sender_then_silence(telegram, start_agent, tmp_path):
    agent = await start_agent(config(telegram))
    await polling(agent)
    code = PairingCodes(tmp_path / "state" / "pairing.json").issue("telegram").code
    for guess in range(7):
        telegram.push_message(7, f"/pair WRONG{guess:03d}")
        await asyncio.sleep(0.1)
    await until(lambda: len(delivered_to(telegram, 7)) >= 5)
    await asyncio.sleep(0.3)
    assert delivered_to(telegram, 7) == [WRONG] * 5  # the sixth and seventh: no reply
    assert "7" not in agent.runtime.access["telegram"].allowed
    telegram.push_message(8, "/pair WRONG")  # others are not silenced
    await until(lambda: delivered_to(telegram, 8))
    assert delivered_to(telegram, 8) == [WRONG]
    telegram.push_message(7, f"/pair {code}")  # a current code pairs even a silenced sender
    await until(lambda: len(delivered_to(telegram, 7)) > 5)
    assert delivered_to(telegram, 7)[5].startswith("Paired")
    assert "7" in agent.runtime.access["telegram"].allowed


async def test_a_thousand_random_shapes_then_the_allowed_user_still_works(telegram, start_agent,
                                                                          mock_factory, tmp_path):
    rng = random.Random(1015)
    stranger = {"message": message(**{"from": {"id": 7, "is_bot": False}},
                                   chat={"id": 7, "type": "private"}, text="/pair WRONG")}
    press = {"callback_query": callback(**{"from": {"id": 7}})}
    shapes = [mutate(rng.choice([stranger, press]), rng) for _ in range(1000)]
    agent = await start_agent(config(telegram))
    await polling(agent)
    ids = telegram.push_raw(*[dict(s) if isinstance(s, dict) else {"message": s} for s in shapes])
    await led_on_within_2s(telegram, mock_factory)
    assert int((tmp_path / "state" / "telegram" / "offset").read_text()) == max(ids) + 2
    assert agent.runtime.supervisors["telegram"].restarts == 0
