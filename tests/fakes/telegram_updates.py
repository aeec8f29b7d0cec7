"""Hostile Telegram updates: malformed shapes of a real update, and random mutations of one."""

from __future__ import annotations

import random
import time


def message(**fields) -> dict:
    base = {"message_id": 900, "date": int(time.time()), "text": "/gpio led on",
            "from": {"id": 42, "is_bot": False, "first_name": "spoof"},
            "chat": {"id": 42, "type": "private"}}
    for key, value in fields.items():
        if value is ...:
            base.pop(key)
        else:
            base[key] = value
    return base


def callback(**fields) -> dict:
    base = {"id": "cb-hostile", "data": "appr:x:approve", "chat_instance": "1",
            "from": {"id": 42, "is_bot": False, "first_name": "spoof"},
            "message": {"message_id": 5, "chat": {"id": 42, "type": "private"}, "text": "?"}}
    for key, value in fields.items():
        if value is ...:
            base.pop(key)
        else:
            base[key] = value
    return base


MALFORMED = {
    "from is null": {"message": message(**{"from": None})},
    "from is a string": {"message": message(**{"from": "42"})},
    "from missing": {"message": message(**{"from": ...})},
    "from.id is a string": {"message": message(**{"from": {"id": "42"}})},
    "from.id is negative": {"message": message(**{"from": {"id": -42}})},
    "from.id is true": {"message": message(**{"from": {"id": True}})},
    "from.id is a float": {"message": message(**{"from": {"id": 42.0}})},
    "chat missing": {"message": message(chat=...)},
    "chat is a list": {"message": message(chat=[42])},
    "chat.id is a dict": {"message": message(chat={"id": {"id": 42}, "type": "private"})},
    "chat.id is a string": {"message": message(chat={"id": "42", "type": "private"})},
    "text is a number": {"message": message(text=42)},
    "text is a list": {"message": message(text=["/gpio", "led", "on"])},
    "caption is a dict": {"message": message(text=..., caption={"t": "/gpio led on"})},
    "huge text": {"message": message(text="/gpio led on " + "x" * 1_000_000)},
    "date is a string": {"message": message(date="yesterday")},
    "date missing": {"message": message(date=...)},
    "message_id missing": {"message": message(message_id=...)},
    "thread id is a string": {"message": message(is_topic_message=True, message_thread_id="t")},
    "reply_to_message is a string": {"message": message(reply_to_message="hi")},
    "nested nulls": {"message": {"message_id": None, "date": None, "chat": None,
                                 "from": {"id": None}, "text": None}},
    "message is null": {"message": None},
    "message is a string": {"message": "/gpio led on"},
    "message is a list": {"message": [message()]},
    "callback without id": {"callback_query": callback(id=...)},
    "callback id is a number": {"callback_query": callback(id=7)},
    "callback from is null": {"callback_query": callback(**{"from": None})},
    "callback data is a dict": {"callback_query": callback(data={"appr": 1})},
    "callback message without chat": {"callback_query": callback(message={"message_id": 5})},
    "edited_message (not asked for)": {"edited_message": message()},
    "my_chat_member (unknown kind)": {"my_chat_member": {"chat": {"id": 42}}},
    "poll (unknown kind)": {"poll": {"id": "p"}},
    "nothing but update_id": {},
}


JUNK: list[object] = [None, "", "7", 7, -1, 0, 2**70, 1.5, True, [], {}, {"id": None}, "x" * 10_000]
"""Values a hostile update might carry (no allowed user's id among them)."""


def mutate(value, rng: random.Random, depth: int = 0):
    """``value`` with one field replaced, dropped or (recursively) mutated."""
    if isinstance(value, dict) and value and depth < 4:
        key = rng.choice(list(value))
        choice = rng.random()
        if choice < 0.2:
            return {k: v for k, v in value.items() if k != key}
        if choice < 0.6:
            return {**value, key: rng.choice(JUNK)}
        return {**value, key: mutate(value[key], rng, depth + 1)}
    return rng.choice(JUNK)
