"""The update model at the boundary: real Telegram updates parse; every malformed shape of the
hostile test, and random shapes built from a real update, are refused without raising."""

from __future__ import annotations

import logging
import random

import pytest

from edge.channels.telegram_updates import parse_update, update_id_of
from tests.fakes.telegram_updates import MALFORMED, mutate

REAL = {"update_id": 7, "message": {
    "message_id": 3, "date": 1_700_000_000, "text": "@edge_test_bot /gpio led on",
    "from": {"id": 42, "is_bot": False, "first_name": "A", "language_code": "en"},
    "chat": {"id": -100123, "type": "supergroup", "title": "lab"},
    "message_thread_id": 9, "is_topic_message": True,
    "reply_to_message": {"message_id": 2, "date": 1, "chat": {"id": -100123, "type": "supergroup"},
                         "from": {"id": 999, "is_bot": True, "first_name": "Edge"}},
    "photo": [{"file_id": "f", "width": 1, "height": 1}], "entities": [{"type": "mention"}]}}


def test_a_real_update_parses_and_extra_fields_are_ignored():
    update = parse_update(REAL)
    assert update is not None and update.message is not None
    message = update.message
    assert (message.sender.id, message.chat.id, message.message_thread_id) == (42, -100123, 9)
    assert message.reply_to_message is not None and message.reply_to_message.sender is not None
    assert message.reply_to_message.sender.id == 999 and message.attachments == ("photo",)


def test_a_callback_query_parses():
    update = parse_update({"update_id": 8, "callback_query": {
        "id": "q1", "data": "appr:t:approve", "chat_instance": "1", "from": {"id": 42},
        "message": {"message_id": 5, "date": 0, "chat": {"id": 42, "type": "private"}}}})
    assert update is not None and update.callback_query is not None
    assert update.callback_query.sender.id == 42 and update.callback_query.data == "appr:t:approve"


def test_updates_are_read_only_and_sender_may_be_given_by_its_name():
    update = parse_update({"update_id": 9, "message": {
        "message_id": 1, "date": 0, "sender": {"id": 7}, "chat": {"id": 7}}})
    assert update is not None and update.message is not None
    assert (update.message.sender.id, update.message.chat.type) == (7, "private")
    with pytest.raises(AttributeError):
        update.message.text = "/gpio led on"


@pytest.mark.parametrize("field, value", [("is_bot", "yes"), ("is_bot", 1), ("username", 5),
                                          ("id", 0)])
def test_user_fields_are_strict(field, value):
    raw = {"update_id": 3, "message": {"message_id": 1, "date": 0, "chat": {"id": 7},
                                       "from": {"id": 7, field: value}}}
    assert parse_update(raw) is None


def test_a_refused_update_is_logged_with_where_it_was_wrong(caplog):
    caplog.set_level(logging.WARNING, logger="edge.channels.telegram_updates")
    raw = {"update_id": 4, "message": {"message_id": "1", "date": 0, "chat": {"id": 7},
                                       "from": {"id": True}, "text": "x" * 9000}}
    assert parse_update(raw) is None
    assert caplog.messages == ["telegram_update_ignored update_id=4 reason=malformed "
                               "fields=message.from.id,message.message_id,message.text"]


@pytest.mark.parametrize("shape", list(MALFORMED), ids=list(MALFORMED))
def test_malformed_shapes_are_refused(shape):
    assert parse_update({"update_id": 1, **MALFORMED[shape]}) is None


@pytest.mark.parametrize("raw", [None, "update", [1], 5, {"update_id": "1"}, {"update_id": True}])
def test_update_id_is_read_only_when_usable(raw):
    assert update_id_of(raw) is None
    assert parse_update(raw) is None


def test_random_shapes_never_raise():
    rng = random.Random(15)
    for _ in range(1000):
        shape = mutate(REAL, rng)
        parse_update(shape)  # a model or None, never an exception
