"""signal-cli events at the boundary: real data messages parse (direct and group, with mentions
and attachments); other kinds are ignored quietly; every malformed shape of the hostile test, and
random shapes built from a real event, are refused without raising and logged without the text."""

from __future__ import annotations

import json
import logging
import random

import pytest

from edge.channels.signal_events import MAX_TEXT_CHARS, Envelope, parse_event
from tests.fakes.signal_server import MALFORMED, event

ACCOUNT = "+4915100000000"
REAL_GROUP_MESSAGE = {"account": ACCOUNT, "envelope": {
    "source": "+4915111111111", "sourceNumber": "+4915111111111",
    "sourceUuid": "7ccae375-cd51-4c82-8b1e-7be3280aa485", "sourceName": "Owner", "sourceDevice": 1,
    "timestamp": 1745372297238, "serverReceivedTimestamp": 1745372294830,
    "dataMessage": {
        "timestamp": 1745372297238, "message": "\ufffc /gpio led on", "expiresInSeconds": 0,
        "viewOnce": False, "groupInfo": {"groupId": "Zm9vYmFyYmF6cXV4", "type": "DELIVER"},
        "mentions": [{"name": ACCOUNT, "number": ACCOUNT, "uuid": "u-bot", "start": 0, "length": 1},
                     {"uuid": "u-other", "start": 2, "length": 1}],
        "attachments": [{"contentType": "image/jpeg", "filename": "a.jpg", "id": "att-1.jpg",
                         "size": 1024, "width": 10, "height": 10},
                        {"contentType": "audio/aac", "id": "att-2.aac"}]}}}


def parsed(raw: object) -> Envelope | None:
    return parse_event(raw if isinstance(raw, str) else json.dumps(raw))


def test_a_direct_message_parses_and_extra_fields_are_ignored():
    envelope = parsed(event(data={"message": "/gpio led on", "reaction": None}, sourceName="A"))
    assert envelope is not None and envelope.data_message is not None
    assert (envelope.sender, envelope.timestamp) == ("+4915111111111", 1_700_000_000_000)
    data = envelope.data_message
    assert (data.message, data.group_id, data.mentions, data.attachments) == (
        "/gpio led on", None, None, None)


def test_a_group_message_with_mentions_and_attachments_parses():
    envelope = parsed(REAL_GROUP_MESSAGE)
    assert envelope is not None and envelope.data_message is not None
    data = envelope.data_message
    assert data.message == "\ufffc /gpio led on" and data.group_id == "Zm9vYmFyYmF6cXV4"
    assert [m.number for m in data.mentions or ()] == [ACCOUNT, None]
    assert [a.id for a in data.attachments or ()] == ["att-1.jpg", "att-2.aac"]


@pytest.mark.parametrize("senders, expected", [
    ({}, "+4915111111111"),
    ({"sourceNumber": None}, "uuid-spoofed"),
    ({"sourceNumber": ""}, "uuid-spoofed"),
    ({"sourceNumber": ..., "sourceUuid": ...}, "+4915111111111"),  # the legacy source
    ({"sourceNumber": ..., "sourceUuid": ..., "source": "+4917"}, "+4917"),
    ({"source": "+4917", "sourceUuid": None}, "+4915111111111"),
])
def test_the_sender_is_the_number_then_the_uuid_then_the_source(senders, expected):
    envelope = parsed(event(**senders))
    assert envelope is not None and envelope.sender == expected


def test_envelopes_are_read_only():
    envelope = parsed(event())
    assert envelope is not None and envelope.data_message is not None
    with pytest.raises(AttributeError):
        envelope.source_number = "+4900"
    with pytest.raises(AttributeError):
        envelope.data_message.message = "/gpio led off"


@pytest.mark.parametrize("kind, raw", [
    ("typing", {"envelope": {"source": "+4915111111111", "sourceNumber": "+4915111111111",
                             "timestamp": 1, "typingMessage": {"action": "STARTED", "timestamp": 1}},
                "account": ACCOUNT}),
    ("receipt", {"envelope": {"sourceNumber": "+4915111111111", "timestamp": 2,
                              "receiptMessage": {"when": 2, "isDelivery": True, "timestamps": [1]}}}),
    ("sync", {"envelope": {"sourceNumber": ACCOUNT, "timestamp": 3,
                           "syncMessage": {"sentMessage": {"message": "/gpio led on"}}}}),
    ("dataMessage null", event(dataMessage=None)),
    ("no envelope", {"account": ACCOUNT, "exception": {"message": "decryption failed"}}),
    ("envelope null", {"envelope": None}),
])
def test_kinds_not_handled_are_ignored_quietly(kind, raw, caplog):
    caplog.set_level(logging.INFO, logger="edge.channels.signal_events")
    assert parsed(raw) is None
    assert len(caplog.records) == 1 and caplog.records[0].levelno == logging.INFO
    assert "reason=unhandled_kind" in caplog.messages[0]


@pytest.mark.parametrize("data", [{"message": ...}, {"message": None}, {"message": ""},
                                  {"message": ..., "attachments": [{"id": "a1"}]},
                                  {"message": ..., "reaction": {"emoji": "x"}}])
def test_a_data_message_without_text_is_ignored_quietly(data, caplog):
    caplog.set_level(logging.INFO, logger="edge.channels.signal_events")
    assert parsed(event(data=data)) is None
    assert caplog.messages == ["signal_event_ignored timestamp=1700000000000 reason=no_text"]
    assert caplog.records[0].levelno == logging.INFO


@pytest.mark.parametrize("shape", list(MALFORMED), ids=list(MALFORMED))
def test_malformed_events_are_refused_with_one_warning(shape, caplog):
    caplog.set_level(logging.INFO, logger="edge.channels.signal_events")
    assert parsed(MALFORMED[shape]) is None
    assert [r.levelno for r in caplog.records] == [logging.WARNING]
    assert caplog.messages[0].startswith("signal_event_ignored ")
    assert "reason=malformed fields=" in caplog.messages[0] or "reason=not_json" in caplog.messages[0]


def test_a_refused_event_is_logged_with_where_it_was_wrong_and_never_its_text(caplog):
    caplog.set_level(logging.INFO, logger="edge.channels.signal_events")
    secret = "my PIN is 4711 " + "x" * MAX_TEXT_CHARS
    raw = event(data={"message": secret, "mentions": [{"number": 5}], "attachments": [{"id": 7}]},
                timestamp=1234)
    assert parsed(raw) is None
    assert caplog.messages == ["signal_event_ignored timestamp=1234 reason=malformed fields="
                               "envelope.dataMessage.attachments.0.id,"
                               "envelope.dataMessage.mentions.0.number,"
                               "envelope.dataMessage.message"]
    assert parsed(event(data={"message": "my PIN is 4711"}, timestamp="1234")) is None
    assert "4711" not in caplog.text


def test_text_up_to_the_cap_is_accepted():
    envelope = parsed(event(data={"message": "x" * MAX_TEXT_CHARS}))
    assert envelope is not None and envelope.data_message is not None
    assert len(envelope.data_message.message or "") == MAX_TEXT_CHARS
    assert parsed(event(data={"message": "x" * (MAX_TEXT_CHARS + 1)})) is None


ODD_VALUES = [None, True, 0, -1, 1.5, "", "x", "9" * 40, [], {}, [{}], {"id": None}]


def mutate(value: object, rng: random.Random) -> object:
    """A copy of ``value`` with one thing somewhere inside it removed or replaced."""
    if isinstance(value, dict) and value and rng.random() < 0.8:
        key = rng.choice(list(value))
        copy = dict(value)
        if rng.random() < 0.2:
            copy.pop(key)
        else:
            copy[key] = mutate(value[key], rng)
        return copy
    if isinstance(value, list) and value and rng.random() < 0.8:
        index = rng.randrange(len(value))
        return [*value[:index], mutate(value[index], rng), *value[index + 1:]]
    return rng.choice([*ODD_VALUES, [value], {"value": value}])


def test_random_shapes_never_raise_and_what_parses_is_whole():
    rng = random.Random(2026)
    accepted = 0
    for _ in range(2000):
        shape = REAL_GROUP_MESSAGE
        for _ in range(rng.randint(1, 3)):
            shape = mutate(shape, rng)
        envelope = parsed(shape)
        if envelope is None:
            continue
        accepted += 1
        data = envelope.data_message
        assert isinstance(envelope.sender, str) and envelope.sender
        assert isinstance(envelope.timestamp, int) and envelope.timestamp >= 0
        assert data is not None and isinstance(data.message, str) and data.message
        assert data.group_id is None or isinstance(data.group_id, str) and data.group_id
        assert all(m.number is None or isinstance(m.number, str) for m in data.mentions or ())
        assert all(a.id is None or isinstance(a.id, str) and a.id for a in data.attachments or ())
    assert 0 < accepted < 2000  # some mutations are harmless (an extra key), most are not


def test_an_attachment_without_an_id_keeps_the_messages_text():
    """signal-cli may leave an attachment's id out: the text still reaches the agent."""
    envelope = parsed(event(data={"message": "look at this",
                                  "attachments": [{"contentType": "image/jpeg"}]}))
    assert envelope is not None and envelope.data_message is not None
    assert envelope.data_message.message == "look at this"
