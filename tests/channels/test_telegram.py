"""Telegram end to end against a loopback Bot API: allowed and unknown senders, pairing,
approvals, errors (409, 429, 5xx, dropped polls), offsets across restarts, a stalled poller,
Markdown fallback, photos and chunking."""

from __future__ import annotations

import asyncio
import tomllib

from edge.channels.pairing import PairingCodes
from edge.channels.telegram_send import EXPIRED
from tests.fakes.openai_server import OpenAIServer, completion
from tests.fakes.telegram_server import telegram_config as config
from tests.fakes.telegram_server import texts_to
from tests.helpers import until


async def test_allowed_user_switches_the_led_and_gets_a_reply(telegram, start_agent, mock_factory):
    agent = await start_agent(config(telegram))
    telegram.push_message(42, "/gpio led on")
    await until(lambda: texts_to(telegram, 42))
    assert texts_to(telegram, 42) == ["gpio:GPIO17 (led) set on"]
    assert mock_factory.pin(17).state == 1
    commands = [c["command"] for _, p in telegram.calls if _ == "setMyCommands" for c in p["commands"]]
    assert {"gpio", "pins", "status", "new", "stop", "model"} <= set(commands)
    await agent.stop()
    assert mock_factory.pin(17).state == 0


async def test_unknown_sender_gets_one_hint_and_nothing_else(telegram, start_agent, mock_factory):
    await start_agent(config(telegram))
    telegram.push_message(7, "/gpio led on")
    telegram.push_message(7, "hello?")
    telegram.push_message(42, "/pins")
    await until(lambda: texts_to(telegram, 42))
    await asyncio.sleep(0.2)
    hints = texts_to(telegram, 7)
    assert len(hints) == 1 and "edge-cli channel pair telegram" in hints[0]
    assert mock_factory.pin(17).state == 0


async def test_pairing_adds_the_user_to_the_allowlist_and_config(telegram, start_agent, isolated_env,
                                                              tmp_path, mock_factory):
    agent = await start_agent(config(telegram))
    code = PairingCodes(tmp_path / "state" / "pairing.json").issue("telegram").code
    telegram.push_message(7, "/pair WRONG123")
    await until(lambda: texts_to(telegram, 7))
    telegram.push_message(7, f"/pair {code}")
    await until(lambda: len(texts_to(telegram, 7)) == 2)
    assert texts_to(telegram, 7) == ["That pairing code is wrong or has expired.",
                                     "Paired: you can now use this bot. /help lists the commands."]
    telegram.push_message(7, "/gpio led on")
    await until(lambda: len(texts_to(telegram, 7)) == 3)
    assert mock_factory.pin(17).state == 1
    saved = tomllib.loads((tmp_path / "config.toml").read_text())
    assert saved["channels"]["telegram"]["allowed_users"] == ["42", "43", "7"]
    assert "poll_timeout_seconds = 1" in (tmp_path / "config.toml").read_text()  # layout kept
    telegram.push_message(8, f"/pair {code}")  # a used code does not pair anyone else
    await until(lambda: texts_to(telegram, 8))
    assert texts_to(telegram, 8) == ["That pairing code is wrong or has expired."]
    await agent.stop()


async def test_approval_only_from_the_requester(telegram, start_agent, mock_factory):
    replies = [(200, completion(None, [{"name": "gpio_write", "arguments": {"pin": "led", "value": "on"}}])),
               (200, completion("The LED is on now."))]
    with OpenAIServer(replies) as model:
        extra = f'[provider]\nbase_url = "{model.base_url}"\nmodel = "m"\n[agent]\ndebounce_ms = 0\n'
        await start_agent(config(telegram) + extra)
        telegram.push_message(42, "light up the led")
        request = await until(lambda: [p for p in telegram.sent() if "reply_markup" in p])
        assert request[0]["text"] == "Approve: switch gpio:GPIO17 (led) on?"
        buttons = request[0]["reply_markup"]["inline_keyboard"][0]
        assert [b["text"] for b in buttons] == ["Approve", "Deny", "Always"]
        message = {"message_id": 5, "chat": {"id": 42, "type": "private"}, "text": request[0]["text"]}
        telegram.push_callback(43, buttons[0]["callback_data"], message)
        refusal = await until(lambda: telegram.sent("answerCallbackQuery"))
        assert refusal[0]["text"] == "Only the person who asked (or an admin) can answer this request."
        assert mock_factory.pin(17).state == 0
        telegram.push_callback(42, buttons[0]["callback_data"], message)
        await until(lambda: "The LED is on now.\n\nReceipt: led: on (read back on)" in texts_to(telegram, 42))
        assert mock_factory.pin(17).state == 1
        assert telegram.sent("answerCallbackQuery")[1]["text"] == "Approved."


async def test_unanswered_approval_is_a_denial(telegram, start_agent, mock_factory):
    replies = [(200, completion(None, [{"name": "gpio_write", "arguments": {"pin": "led", "value": "on"}}])),
               (200, completion("I could not switch it."))]
    with OpenAIServer(replies) as model:
        extra = (f'[provider]\nbase_url = "{model.base_url}"\nmodel = "m"\n[agent]\ndebounce_ms = 0\n'
                 '[security]\napproval_timeout_seconds = 0.3\n')
        await start_agent(config(telegram) + extra)
        telegram.push_message(42, "light up the led")
        await until(lambda: any(t.startswith("I could not switch it.\n\nReceipt: led: refused")
                               for t in texts_to(telegram, 42)))
        assert "no approval within 0.3 s" in model.requests[1]["messages"][-1]["content"]
        assert mock_factory.pin(17).state == 0
        (prompt,) = [p for p in telegram.sent() if "reply_markup" in p]
        expired = await until(lambda: [p for p in telegram.sent("editMessageText")
                                       if p["text"].startswith(prompt["text"])])
        assert expired[0]["text"] == f"{prompt['text']}\n{EXPIRED}"
        message_id = expired[0]["message_id"]
        assert telegram.texts[message_id].endswith(EXPIRED) and telegram.markups[message_id] is None


async def test_poll_errors_back_off_and_nothing_is_lost_or_replayed(telegram, start_agent, tmp_path,
                                                                    monkeypatch):
    monkeypatch.setattr("edge.channels.telegram.CONFLICT_BACKOFF", 0.1)
    monkeypatch.setattr("edge.channels.telegram.BACKOFF_START", 0.05)
    telegram.failures = [(409, "Conflict: terminated by other getUpdates request; make sure that "
                               "only one bot instance is running", None),
                         (429, "Too Many Requests: retry after 1", 1), (502, "Bad Gateway", None), "drop"]
    agent = await start_agent(config(telegram))
    telegram.push_message(42, "/gpio led")
    await until(lambda: texts_to(telegram, 42), timeout=15)
    assert telegram.failures == []
    offset = int((tmp_path / "state" / "telegram" / "offset").read_text())
    assert offset == 101
    await agent.stop()
    agent2 = await start_agent(config(telegram))
    telegram.push_message(42, "/gpio led on")
    await until(lambda: len(texts_to(telegram, 42)) == 2)
    await asyncio.sleep(1.2)
    assert texts_to(telegram, 42) == ["gpio:GPIO17 (led) is off", "gpio:GPIO17 (led) set on"]
    await agent2.stop()


async def test_stalled_poller_is_reported_down_and_restarted(telegram, start_agent, monkeypatch):
    monkeypatch.setattr("edge.channels.telegram.STALL_GRACE_SECONDS", 0.5)
    monkeypatch.setattr("edge.channels.supervisor.STALL_CHECK_SECONDS", 0.1)
    agent = await start_agent(config(telegram))
    await until(lambda: agent.runtime.channels["telegram"].last_poll)
    telegram.failures = [("hang", 6)]
    down = None
    for _ in range(100):
        status = await agent.runtime.status()
        (channel,) = status["channels"]
        if not channel["healthy"]:
            down = channel
            break
        await asyncio.sleep(0.05)
    assert down is not None and down["down_since"]
    telegram.push_message(42, "/gpio led")
    await until(lambda: texts_to(telegram, 42), timeout=10)
    status = await agent.runtime.status()
    assert status["channels"][0]["healthy"] and status["channels"][0]["restarts"] >= 1
    assert "stalled" in status["channels"][0]["last_error"]


async def test_markdown_rejected_is_resent_plain_and_photos_and_chunks(telegram, start_agent, tmp_path):
    image = tmp_path / "plot.png"
    image.write_bytes(b"\x89PNG\r\n\x1a\nfake")
    long_text = "\n\n".join(f"Paragraph {i}: " + "x" * 300 for i in range(20))
    replies = [(200, completion(f"*unclosed bold\n[IMAGE:{image}]")), (200, completion(long_text))]
    with OpenAIServer(replies) as model:
        extra = (f'[provider]\nbase_url = "{model.base_url}"\nmodel = "m"\n[agent]\ndebounce_ms = 0\n'
                 f'outbox = "{tmp_path}"\n')
        await start_agent(config(telegram) + extra)
        telegram.reject_markdown = True
        telegram.push_message(42, "show me the plot")
        await until(lambda: telegram.photos)
        attempts = [("parse_mode" in p, p["caption"]) for p in telegram.sent("sendPhoto")]
        assert attempts == [(True, "*unclosed bold"), (False, "*unclosed bold")]  # its caption
        assert b"\x89PNG" in telegram.photos[0]["body"] and telegram.sent() == []
        telegram.reject_markdown = False
        telegram.push_message(42, "tell me everything")
        await until(lambda: len(texts_to(telegram, 42)) > 1)
        await asyncio.sleep(0.3)
        chunks = texts_to(telegram, 42)
        assert all(len(c) <= 4096 for c in chunks) and "".join(chunks).count("Paragraph") == 20


async def test_streamed_reply_is_a_draft_edited_in_place(telegram, start_agent):
    text = "Draft streaming works: " + "word " * 40
    with OpenAIServer([(200, completion(text.strip()))]) as model:
        extra = (f'[provider]\nbase_url = "{model.base_url}"\nmodel = "m"\n[agent]\ndebounce_ms = 0\n')
        await start_agent(config(telegram, drafts=True) + extra)
        telegram.push_message(42, "stream please")
        final = await until(lambda: [p for p in telegram.sent("editMessageText")
                                     if p["text"] == text.strip()])
    assert model.requests[0]["stream"] is True
    draft = texts_to(telegram, 42)
    assert len(draft) == 1 and draft[0].startswith("Draft")  # the draft, sent once
    edits = telegram.sent("editMessageText")
    assert final[0]["message_id"] == edits[0]["message_id"] and final[0] is edits[-1]
    assert len(edits) < 10  # edits are rate-bounded, not one per chunk


async def test_a_reply_the_draft_already_shows_costs_one_call(telegram, start_agent, caplog):
    text = "short"  # one chunk: the draft already shows the whole reply when it is finalised
    with OpenAIServer([(200, completion(text))]) as model:
        extra = (f'[provider]\nbase_url = "{model.base_url}"\nmodel = "m"\n[agent]\ndebounce_ms = 0\n')
        agent = await start_agent(config(telegram, drafts=True) + extra)
        telegram.push_message(42, "hi")
        await until(lambda: texts_to(telegram, 42))
        await asyncio.sleep(0.5)
    assert texts_to(telegram, 42) == ["short"]  # sent once, never again as a "retry"
    replies = [m for m, _ in telegram.calls if m in ("sendMessage", "editMessageText")]
    assert replies == ["sendMessage"]  # and never edited to the text it shows: one call a reply
    assert "delivery_failed" not in caplog.text and "not modified" not in caplog.text
    await agent.stop()


async def test_failing_polls_are_reported_down_at_once_since_the_first_failure(telegram, start_agent):
    import time as clock

    agent = await start_agent(config(telegram))  # poll_timeout_seconds = 1
    await until(lambda: agent.runtime.channels["telegram"].last_poll)
    failed_at = clock.time()
    telegram.failures = [(502, "Bad Gateway", None)] * 50
    started = clock.monotonic()
    down = None
    while down is None and clock.monotonic() - started < 8:  # poll timeout plus a few seconds
        (channel,) = (await agent.runtime.status())["channels"]
        down = channel if not channel["healthy"] else None
        await asyncio.sleep(0.05)
    assert down is not None, "a failing poller must be reported down within seconds"
    since = clock.mktime(clock.strptime(down["down_since"], "%Y-%m-%dT%H:%M:%S"))
    assert failed_at - 1 <= since <= failed_at + 3  # the first failure, not a later restart
    assert "502" in down["last_error"]  # why, in status and in the heartbeat's notice to admins
    assert "502" in agent.runtime._down_components()["channel telegram"]
    await agent.stop()
