"""Sessions on disk: atomic index, durable transcripts, locks, resets."""

from __future__ import annotations

import json
import os
import stat
import time
from datetime import datetime

import pytest

from edge.agent.sessions import KEPT_TURNS, ResetPolicy, SessionEntry, SessionLock, SessionStore
from edge.core.messages import ChatMessage


async def test_index_and_transcripts_are_private_files(tmp_path):
    store = SessionStore(tmp_path / "s")
    session = await store.open("agent:main:cli:direct:alice", "cli")
    await store.append(session, [ChatMessage.user("hi"), ChatMessage.assistant("hello")])
    index = json.loads((tmp_path / "s" / "sessions.json").read_text())
    assert index["agent:main:cli:direct:alice"]["session_id"] == session.entry.session_id
    for path in (tmp_path / "s" / "sessions.json", store.transcript_path(session.entry)):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert not list((tmp_path / "s").glob("*.tmp")) and not list((tmp_path / "s").glob("*.lock"))


async def test_a_session_without_resets_keeps_its_last_turns_in_memory_and_on_disk(tmp_path):
    store = SessionStore(tmp_path)
    session = await store.open("k")
    for n in range(2 * KEPT_TURNS + 1):  # two turns each: past twice the bound once
        await store.append(session, [ChatMessage.user(f"q{n}"), ChatMessage.assistant(f"a{n}")])
    lines = store.transcript_path(session.entry).read_text().splitlines()
    assert KEPT_TURNS <= len(session.turns) <= 2 * KEPT_TURNS
    assert len(lines) == len(session.turns)
    assert [json.loads(line)["content"] for line in lines[-2:]] == [f"q{2 * KEPT_TURNS}",
                                                                     f"a{2 * KEPT_TURNS}"]
    reopened = await SessionStore(tmp_path).open("k")
    assert [t.content for t in reopened.turns] == [t.content for t in session.turns][-KEPT_TURNS:]


async def test_a_line_cut_by_a_crash_is_skipped_and_the_rest_kept(tmp_path):
    store = SessionStore(tmp_path)
    session = await store.open("k")
    await store.append(session, [ChatMessage.user("one"), ChatMessage.assistant("two")])
    with store.transcript_path(session.entry).open("a") as fh:
        fh.write('{"role": "user", "content": "half')
    reopened = await SessionStore(tmp_path).open("k")
    assert [t.content for t in reopened.turns] == ["one", "two"]


async def test_corrupt_index_is_set_aside_not_fatal(tmp_path):
    (tmp_path / "sessions.json").write_text("{not json")
    session = await SessionStore(tmp_path).open("k")
    assert session.turns == [] and list(tmp_path.glob("sessions.corrupt-*"))


async def test_stale_lock_of_a_dead_process_is_removed(tmp_path):
    lock_path = tmp_path / "x.lock"
    lock_path.write_text(json.dumps({"pid": 999_999_9, "created_at": time.time()}))
    async with SessionLock(lock_path):
        assert json.loads(lock_path.read_text())["pid"] == os.getpid()
    assert not lock_path.exists()


async def test_old_lock_is_stale_even_if_pid_lives(tmp_path):
    lock_path = tmp_path / "x.lock"
    lock_path.write_text(json.dumps({"pid": os.getpid(), "created_at": time.time() - 31 * 60}))
    async with SessionLock(lock_path):
        pass


async def test_live_lock_times_out(tmp_path, monkeypatch):
    monkeypatch.setattr("edge.agent.sessions.LOCK_TIMEOUT_SECONDS", 0.2)
    lock_path = tmp_path / "x.lock"
    lock_path.write_text(json.dumps({"pid": os.getpid(), "created_at": time.time()}))
    with pytest.raises(TimeoutError, match="held by another process"):
        async with SessionLock(lock_path):
            pass


async def test_reset_keeps_old_transcript_and_starts_empty(tmp_path):
    store = SessionStore(tmp_path)
    first = await store.open("k")
    await store.append(first, [ChatMessage.user("old")])
    second = await store.reset_session("k")
    assert second.entry.session_id != first.entry.session_id and second.turns == []
    assert store.transcript_path(first.entry).exists()
    assert (await SessionStore(tmp_path).open("k")).entry.session_id == second.entry.session_id


async def test_ended_transcripts_are_kept_for_their_days_then_removed(tmp_path):
    store = SessionStore(tmp_path, ResetPolicy(ended_transcript_days=30))
    first = await store.open("k")
    await store.append(first, [ChatMessage.user("a month ago")])
    old = store.transcript_path(first.entry)
    second = await store.reset_session("k")  # ended today: kept
    await store.append(second, [ChatMessage.user("last week")])
    assert old.exists()
    month = time.time() - 31 * 86400
    os.utime(old, (month, month))
    recent = store.transcript_path(second.entry)
    os.utime(recent, (month, month))  # the live session's is never removed, however old
    other = await store.open("other")
    await store.append(other, [ChatMessage.user("hi")])
    await store.reset_session("other")
    assert not old.exists() and recent.exists()
    assert store.transcript_path(other.entry).exists()  # ended just now


def test_idle_and_daily_reset_policies():
    now = datetime(2026, 11, 22, 10, 0).timestamp()
    entry = SessionEntry("id", now - 3600, now - 3600)
    assert ResetPolicy(idle_timeout_minutes=30).expired(entry, now)
    assert not ResetPolicy(idle_timeout_minutes=90).expired(entry, now)
    before_nine = SessionEntry("id", now - 3660, now - 3660)  # last used 08:59
    assert ResetPolicy(daily_reset_hour=9).expired(before_nine, now)
    assert not ResetPolicy(daily_reset_hour=9).expired(entry, now)  # 09:00 is not before 09:00
    assert not ResetPolicy(daily_reset_hour=4).expired(entry, now)
    yesterday = SessionEntry("id", now - 86400, now - 86400)
    assert ResetPolicy(daily_reset_hour=4).expired(yesterday, now)


async def test_expired_session_is_replaced_on_open(tmp_path):
    store = SessionStore(tmp_path, ResetPolicy(idle_timeout_minutes=0.001))
    first = await store.open("k")
    await store.append(first, [ChatMessage.user("x")])
    time.sleep(0.1)
    assert (await store.open("k")).entry.session_id != first.entry.session_id
