"""Pairing codes and what strangers hear: codes expire after 10 minutes and work once; wrong
guesses are limited per sender and per channel (then silence), while a current code always pairs,
however many strangers guessed wrong before; hints and replies to strangers are rate-limited. A
fake clock stands in for the hour."""

from __future__ import annotations

import fcntl
import json
import os
import threading

from edge.channels.pairing import (
    CODES_PER_CHANNEL,
    PAIRED,
    REPLIES_PER_MINUTE,
    WRONG_ATTEMPTS_PER_CHANNEL,
    WRONG_ATTEMPTS_PER_SENDER,
    WRONG_CODE,
    PairingCodes,
    Strangers,
    pairing_hint,
)


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


class Codes:
    """The runtime's pair callable over real PairingCodes, counting the checks."""

    def __init__(self, tmp_path, clock: Clock):
        self.codes = PairingCodes(tmp_path / "pairing.json", clock=clock)
        self.checked: list[tuple[str, str]] = []

    async def __call__(self, channel: str, sender: str, code: str) -> bool:
        self.checked.append((sender, code))
        return self.codes.redeem(channel, code)


def test_codes_expire_after_ten_minutes_and_work_once(tmp_path):
    clock = Clock()
    codes = PairingCodes(tmp_path / "pairing.json", clock=clock)
    issued = codes.issue("telegram")
    code = issued.code
    assert issued.expires == clock.now + 600
    clock.now += 601
    assert not codes.redeem("telegram", code)
    code = codes.issue("telegram").code
    clock.now += 599
    assert not codes.redeem("signal", code)
    assert codes.redeem("telegram", code.lower())
    assert not codes.redeem("telegram", code)


def test_a_second_code_leaves_the_first_valid(tmp_path):
    clock = Clock()
    codes = PairingCodes(tmp_path / "pairing.json", clock=clock)
    first = codes.issue("telegram")
    clock.now += 60
    second = codes.issue("telegram")
    assert (first.outstanding, first.dropped) == (1, 0)
    assert (second.outstanding, second.dropped) == (2, 0)
    assert codes.redeem("telegram", first.code)  # the earlier invitee still gets in
    assert codes.outstanding("telegram") == 1
    assert not codes.redeem("telegram", first.code)  # used up
    assert codes.redeem("telegram", second.code)
    assert codes.outstanding("telegram") == 0


def test_each_code_expires_on_its_own(tmp_path):
    clock = Clock()
    codes = PairingCodes(tmp_path / "pairing.json", clock=clock)
    first = codes.issue("telegram")
    clock.now += 300
    second = codes.issue("telegram")
    clock.now += 301  # the first is 601 s old, the second 301 s
    assert codes.outstanding("telegram") == 1
    assert not codes.redeem("telegram", first.code)
    assert codes.redeem("telegram", second.code)


def test_past_the_limit_the_oldest_code_is_dropped_and_said(tmp_path):
    clock = Clock()
    codes = PairingCodes(tmp_path / "pairing.json", clock=clock)
    issued = []
    for _ in range(CODES_PER_CHANNEL):
        issued.append(codes.issue("telegram"))
        clock.now += 1
    assert [i.dropped for i in issued] == [0] * CODES_PER_CHANNEL
    extra = codes.issue("telegram")
    assert (extra.outstanding, extra.dropped) == (CODES_PER_CHANNEL, 1)
    assert not codes.redeem("telegram", issued[0].code)  # the oldest
    assert all(codes.redeem("telegram", i.code) for i in [*issued[1:], extra])
    assert codes.issue("signal").outstanding == 1  # per channel


def test_codes_are_stored_only_as_hashes(tmp_path):
    codes = PairingCodes(tmp_path / "pairing.json")
    first, second = codes.issue("telegram"), codes.issue("telegram")
    text = (tmp_path / "pairing.json").read_text()
    assert first.code not in text and second.code not in text
    assert len(json.loads(text)["telegram"]) == 2


def test_a_code_file_from_before_several_codes_still_pairs(tmp_path):
    clock = Clock()
    codes = PairingCodes(tmp_path / "pairing.json", clock=clock)
    code = codes.issue("telegram").code
    stored = json.loads((tmp_path / "pairing.json").read_text())
    (tmp_path / "pairing.json").write_text(json.dumps({"telegram": stored["telegram"][0]}))
    assert codes.redeem("telegram", code)


def test_issuing_waits_for_a_redeem_in_progress(tmp_path):
    """The CLI and the agent share the file: each read-and-write holds the directory's lock, so
    a code issued while another is redeemed can neither be lost nor bring the used one back."""
    codes = PairingCodes(tmp_path / "pairing.json")
    used = codes.issue("telegram").code
    held = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(held, fcntl.LOCK_EX)  # another process in the middle of its read-and-write
    issued = []
    issuer = threading.Thread(target=lambda: issued.append(codes.issue("telegram")))
    issuer.start()
    issuer.join(0.3)
    assert issuer.is_alive() and issued == []  # waiting, not reading the file under our feet
    data = json.loads((tmp_path / "pairing.json").read_text())
    del data["telegram"]  # the other process redeemed the code meanwhile
    (tmp_path / "pairing.json").write_text(json.dumps(data))
    os.close(held)
    issuer.join(10)
    assert issued[0].outstanding == 1
    assert not codes.redeem("telegram", used)  # not brought back
    assert codes.redeem("telegram", issued[0].code)


async def test_a_sender_gets_five_wrong_answers_then_silence(tmp_path):
    clock = Clock()
    pair = Codes(tmp_path, clock)
    desk = Strangers("telegram", pair, clock=clock)
    answers = [await desk.answer("7", f"/pair WRONG{i}") for i in range(WRONG_ATTEMPTS_PER_SENDER + 2)]
    assert answers == [WRONG_CODE] * WRONG_ATTEMPTS_PER_SENDER + [None, None]
    assert await desk.answer("8", "/pair WRONG") == WRONG_CODE  # others are not silenced
    clock.now += 3600  # an hour later the sender may try again
    assert await desk.answer("7", "/pair WRONG") == WRONG_CODE


async def test_a_silenced_sender_with_a_current_code_is_paired(tmp_path):
    clock = Clock()
    pair = Codes(tmp_path, clock)
    desk = Strangers("telegram", pair, clock=clock)
    for i in range(WRONG_ATTEMPTS_PER_SENDER):
        assert await desk.answer("7", f"/pair WRONG{i}") == WRONG_CODE
    assert await desk.answer("7", "/pair WRONG") is None
    code = pair.codes.issue("telegram").code
    assert await desk.answer("7", f"/pair {code}") == PAIRED
    assert await desk.answer("7", f"/pair {code}") is None  # used up: a wrong code again, silence


async def test_six_strangers_guessing_wrong_cannot_lock_out_the_invitee(tmp_path):
    """The issue's attack: six strangers with five wrong codes each fill the channel's hour."""
    clock = Clock()
    pair = Codes(tmp_path, clock)
    desk = Strangers("telegram", pair, clock=clock)
    code = pair.codes.issue("telegram").code
    for stranger in range(6):
        for guess in range(WRONG_ATTEMPTS_PER_SENDER):
            clock.now += 5  # slower than the overall reply cap (20 a minute): each is answered
            assert await desk.answer(str(1000 + stranger), f"/pair WRONG{guess}") == WRONG_CODE
    assert 6 * WRONG_ATTEMPTS_PER_SENDER == WRONG_ATTEMPTS_PER_CHANNEL
    assert await desk.answer("7", "/pair TYPO") is None  # the channel is silenced for wrong codes
    assert await desk.answer("7", f"/pair {code}") == PAIRED  # but the invitee's code pairs
    assert await desk.answer("1000", f"/pair {code}") is None  # once: then it is wrong, silence


async def test_a_swarm_of_strangers_hits_the_channel_limit(tmp_path):
    clock = Clock()
    pair = Codes(tmp_path, clock)
    desk = Strangers("telegram", pair, clock=clock)
    for sender in range(WRONG_ATTEMPTS_PER_CHANNEL):
        clock.now += 5  # slower than the overall reply cap (20 a minute): each is answered
        assert await desk.answer(str(1000 + sender), "/pair WRONG") == WRONG_CODE
    assert await desk.answer("7", "/pair WRONG") is None  # a fresh sender: silenced all the same
    assert await desk.answer("8", "/pair") is None
    clock.now += 3600  # the window has passed: wrong codes are answered again
    assert await desk.answer("7", "/pair WRONG") == WRONG_CODE


async def test_malformed_pair_commands_count_as_wrong(tmp_path):
    clock = Clock()
    desk = Strangers("telegram", Codes(tmp_path, clock), clock=clock)
    for text in ["/pair", "/pair A B", "/pair@edge_test_bot", "/pair " + "x" * 5000, "/pair ''"]:
        assert await desk.answer("7", text) == WRONG_CODE
    assert await desk.answer("7", "/pair RIGHT") is None


async def test_one_hint_a_day(tmp_path):
    clock = Clock()
    desk = Strangers("telegram", None, clock=clock)
    assert await desk.answer("7", "hello") == pairing_hint("telegram")
    assert await desk.answer("7", "hello?") is None
    assert await desk.answer("7", "/pair CODE") is None  # no pairing configured: a hint at most
    clock.now += 86400
    assert await desk.answer("7", "hello") == pairing_hint("telegram")


async def test_replies_to_strangers_are_capped_per_minute_overall(tmp_path):
    clock = Clock()
    desk = Strangers("telegram", None, clock=clock)
    answers = [await desk.answer(str(1000 + i), "hi") for i in range(REPLIES_PER_MINUTE + 5)]
    assert answers.count(None) == 5
    assert await desk.answer("2000", "hi") is None
    clock.now += 60
    assert await desk.answer("2001", "hi") == pairing_hint("telegram")


async def test_the_paired_reply_is_never_rate_limited(tmp_path):
    clock = Clock()
    pair = Codes(tmp_path, clock)
    desk = Strangers("telegram", pair, clock=clock)
    for i in range(REPLIES_PER_MINUTE):
        assert desk.may_reply(str(1000 + i))
    code = pair.codes.issue("telegram").code
    assert await desk.answer("7", f"/pair {code}") == PAIRED
