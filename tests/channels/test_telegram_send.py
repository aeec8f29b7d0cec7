"""What the Telegram channel sends, counted call by call against the loopback Bot API: no edit
repeats what a message shows already (each call counts against the bot's limits, and Telegram
refuses it with 400 "message is not modified"), and an approval prompt loses its buttons when it
is answered or expires."""

from __future__ import annotations

import pytest

from edge.channels.base import SendMessage
from edge.channels.telegram_api import TelegramAPI
from edge.channels.telegram_send import EXPIRED, TelegramSender
from edge.channels.telegram_updates import CallbackQuery
from edge.core.requester import Requester
from tests.fakes.telegram_server import FakeTelegram, captions_to, photos_to, texts_to


@pytest.fixture
async def sender(telegram):
    api = TelegramAPI(telegram.token, telegram.api_base)
    sender = TelegramSender(api, draft_interval=0.0)
    yield sender
    await sender.aclose()
    await api.aclose()


@pytest.fixture
async def picture_sender(telegram, tmp_path):
    from PIL import Image

    from edge.channels.outbox import Outbox

    Image.new("RGB", (8, 8), "orange").save(tmp_path / "chart-greenhouse.png")
    api = TelegramAPI(telegram.token, telegram.api_base)
    sender = TelegramSender(api, draft_interval=0.0, outbox=Outbox(tmp_path))
    yield sender
    await sender.aclose()
    await api.aclose()


async def test_a_picture_arrives_as_one_message_with_the_text_as_its_caption(telegram,
                                                                              picture_sender):
    caption = "greenhouse, last 1d: temperature 11.7–28.3 °C, mean 19.3 °C; fan on 3 times"
    await picture_sender.send(SendMessage(f"{caption}\n[IMAGE:chart-greenhouse.png]", "42"))
    assert methods(telegram) == ["sendPhoto"]  # no message before the picture
    assert captions_to(telegram, 42) == [caption] and len(photos_to(telegram, 42)) == 1
    assert telegram.photos[0]["parse_mode"] == "Markdown"


async def test_a_caption_past_telegrams_limit_goes_on_after_the_picture(telegram,
                                                                         picture_sender):
    lines = [f"line {i}: " + "x" * 90 for i in range(15)]  # some 1,500 characters
    await picture_sender.send(SendMessage("\n".join(lines) + "\n[IMAGE:chart-greenhouse.png]",
                                          "42"))
    assert methods(telegram) == ["sendPhoto", "sendMessage"]
    [caption] = captions_to(telegram, 42)
    [rest] = texts_to(telegram, 42)
    assert len(caption) <= 1024 and caption.endswith("x") and rest.startswith("line ")
    assert f"{caption}\n{rest}" == "\n".join(lines)  # nothing lost, cut at a line


async def test_a_caption_telegram_cannot_parse_is_resent_plain(telegram, picture_sender):
    telegram.reject_markdown = True
    await picture_sender.send(SendMessage("*unclosed bold\n[IMAGE:chart-greenhouse.png]", "42"))
    assert methods(telegram) == ["sendPhoto", "sendPhoto"]
    assert captions_to(telegram, 42) == ["*unclosed bold"]
    assert "parse_mode" not in telegram.photos[0]


def methods(server: FakeTelegram) -> list[str]:
    return [method for method, _ in server.calls]


async def test_a_draft_showing_the_whole_reply_is_not_edited_again(telegram, sender):
    draft = await sender.send_draft(SendMessage("The LED is on.", "42"))
    await sender.finalize_draft("42", draft, "The LED is on.")
    assert methods(telegram) == ["sendMessage"]  # one call per reply, not two


async def test_a_streamed_draft_is_edited_only_to_new_text(telegram, sender):
    draft = await sender.send_draft(SendMessage("The", "42"))
    for text in ["The LED", "The LED", "The LED is on.", "The LED is on."]:
        await sender.update_draft("42", draft, text)
    await sender.finalize_draft("42", draft, "The LED is on.")
    assert methods(telegram) == ["sendMessage", "editMessageText", "editMessageText"]
    assert telegram.texts[int(draft)] == "The LED is on."


async def test_markdown_that_renders_differently_is_edited_once(telegram, sender):
    draft = await sender.send_draft(SendMessage("The *LED* is on.", "42"))
    await sender.finalize_draft("42", draft, "The *LED* is on.")
    edits = telegram.sent("editMessageText")
    assert methods(telegram) == ["sendMessage", "editMessageText"]
    assert edits[0]["parse_mode"] == "Markdown"


async def test_markdown_telegram_rejects_leaves_the_draft_as_shown(telegram, sender):
    telegram.reject_markdown = True
    draft = await sender.send_draft(SendMessage("*unclosed bold", "42"))
    await sender.finalize_draft("42", draft, "*unclosed bold")
    assert methods(telegram) == ["sendMessage", "editMessageText"]  # no plain-text repeat
    assert telegram.texts[int(draft)] == "*unclosed bold"


async def test_a_changed_final_text_is_still_edited(telegram, sender):
    draft = await sender.send_draft(SendMessage("The LED", "42"))
    await sender.finalize_draft("42", draft, "The LED is on.")
    assert methods(telegram) == ["sendMessage", "editMessageText"]
    assert telegram.texts[int(draft)] == "The LED is on."


def asked() -> Requester:
    return Requester("telegram", "42", reply_target="42")


async def test_an_expired_approval_says_so_and_loses_its_buttons(telegram, sender):
    await sender.request_approval(asked(), "Approve: switch led on?", "abc123")
    (prompt,) = telegram.sent()
    message_id = telegram.next_message_id - 1
    assert telegram.markups[message_id] is not None  # Approve / Deny / Always
    await sender.approval_expired("abc123")
    assert telegram.markups[message_id] is None
    assert telegram.texts[message_id] == f"Approve: switch led on?\n{EXPIRED}"
    await sender.approval_expired("abc123")  # said once
    assert methods(telegram) == ["sendMessage", "editMessageText"]
    assert prompt["chat_id"] == "42"


async def test_an_answered_approval_loses_its_buttons_and_never_expires(telegram, sender):
    await sender.request_approval(asked(), "Approve: switch led on?", "abc123")
    message_id = telegram.next_message_id - 1
    telegram._callbacks.add("cb1")
    query = CallbackQuery.model_validate({
        "id": "cb1", "data": "appr:abc123:approve", "chat_instance": "1",
        "from": {"id": 42, "is_bot": False, "first_name": "x"},
        "message": {"message_id": message_id, "date": 0, "chat": {"id": 42, "type": "private"},
                    "text": "Approve: switch led on?"}})
    await sender.answer_button(query, "Approved.")
    sender.approval_answered("abc123")
    await sender.approval_expired("abc123")
    assert methods(telegram) == ["sendMessage", "answerCallbackQuery", "editMessageText"]
    assert telegram.texts[message_id] == "Approve: switch led on?\nApproved."
    assert telegram.markups[message_id] is None
