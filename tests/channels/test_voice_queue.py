"""The agent's one queue of voice notes: two at a time across channels, one per person in the
order said, a bounded wait and a line beyond it, each note's file private and gone once it is
handled, a killed agent's leftovers cleared at start."""

from __future__ import annotations

import asyncio
import stat
from pathlib import Path

from edge.channels.voice_queue import BUSY, ONE_AT_A_TIME, Place, VoiceNoteQueue
from edge.core.files import create_private


def queue_in(tmp_path: Path, max_transcript_chars: int = 3800, **bounds: int) -> VoiceNoteQueue:
    return VoiceNoteQueue(tmp_path / "voice", max_transcript_chars=max_transcript_chars, **bounds)


async def test_at_most_two_notes_are_handled_at_once_whatever_their_channel(tmp_path):
    queue = queue_in(tmp_path, at_once=2)
    running, most = 0, 0
    release = asyncio.Event()

    async def note(place: Place) -> None:
        nonlocal running, most
        async with place.turn():
            running += 1
            most = max(most, running)
            await release.wait()
            running -= 1

    places = [queue.join(who) for who in ("telegram:1", "signal:+49", "telegram:2", "signal:+44")]
    assert all(isinstance(p, Place) for p in places)
    tasks = [asyncio.create_task(note(p)) for p in places if isinstance(p, Place)]
    for _ in range(5):
        await asyncio.sleep(0)
    assert running == 2
    release.set()
    await asyncio.gather(*tasks)
    assert most == 2 and queue.queued == 0


async def test_one_person_is_answered_one_note_at_a_time_in_the_order_said(tmp_path):
    queue = queue_in(tmp_path, at_once=2)
    order: list[str] = []

    async def note(place: Place, name: str) -> None:
        async with place.turn():
            order.append(f"{name} starts")
            await asyncio.sleep(0)
            order.append(f"{name} ends")

    places = [(queue.join("telegram:42"), name) for name in ("first", "second", "third")]
    await asyncio.gather(*(note(p, n) for p, n in places if isinstance(p, Place)))
    assert order == ["first starts", "first ends", "second starts", "second ends",
                     "third starts", "third ends"]


def test_the_wait_is_bounded_per_person_and_in_all(tmp_path):
    queue = queue_in(tmp_path, at_once=2, waiting=3, per_person=2)
    assert [isinstance(queue.join("telegram:42"), Place) for _ in range(2)] == [True, True]
    assert queue.join("telegram:42") == ONE_AT_A_TIME
    assert isinstance(queue.join("signal:+49"), Place)
    assert isinstance(queue.join("signal:+49"), Place)
    assert isinstance(queue.join("telegram:7"), Place)
    assert queue.join("telegram:8") == BUSY  # 2 at once + 3 waiting: full
    assert queue.queued == 5


async def test_a_place_given_up_frees_it_for_the_next(tmp_path):
    queue = queue_in(tmp_path, at_once=1, waiting=0)
    place = queue.join("telegram:42")
    assert isinstance(place, Place)
    assert queue.join("telegram:7") == BUSY
    place.leave()
    place.leave()  # once only
    assert queue.queued == 0 and isinstance(queue.join("telegram:7"), Place)


async def test_a_notes_file_is_private_and_removed_however_the_turn_ends(tmp_path):
    queue = queue_in(tmp_path)
    seen: list[tuple[Path, int]] = []
    for fails in (False, True):
        place = queue.join("telegram:42")
        assert isinstance(place, Place)
        try:
            async with place.turn() as path:
                with open(create_private(path), "wb") as out:
                    out.write(b"OggS")
                seen.append((path, stat.S_IMODE(path.stat().st_mode)))
                if fails:
                    raise RuntimeError("the download broke off")
        except RuntimeError:
            pass
    assert [(p.parent, mode) for p, mode in seen] == [(tmp_path / "voice", 0o600)] * 2
    assert list((tmp_path / "voice").iterdir()) == [] and queue.queued == 0
    assert stat.S_IMODE((tmp_path / "voice").stat().st_mode) == 0o700


def test_files_a_killed_agent_left_are_removed_at_start(tmp_path):
    voice = tmp_path / "voice"
    voice.mkdir()
    (voice / "0123abcd.part").write_bytes(b"x" * 1000)
    (voice / "notes.txt").write_text("not ours")
    VoiceNoteQueue(voice, max_transcript_chars=3800)
    assert sorted(p.name for p in voice.iterdir()) == ["notes.txt"]


def test_a_long_transcript_is_cut_and_says_so(tmp_path):
    queue = queue_in(tmp_path, max_transcript_chars=100)
    text = "turn on the pump " * 1000
    cut = queue.cut(text)
    assert cut.startswith(text[:90]) and len(cut) < 200
    assert cut.endswith("(cut: the transcript has 17000 characters, 100 are kept; "
                        "[transcription] max_transcript_chars)")
    assert queue.cut("turn on the pump") == "turn on the pump"
