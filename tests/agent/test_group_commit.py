"""Group commit: appends are fsynced before they return, batched, and respect session locks."""

from __future__ import annotations

import asyncio
import json
import os
import time

import pytest

from edge.agent import group_commit
from edge.agent.group_commit import GroupCommit
from edge.agent.sessions import SessionLock


def _held_lock(path):
    path.write_text(json.dumps({"pid": os.getpid(), "created_at": time.time()}))
    return SessionLock(path)


async def test_concurrent_appends_share_worker_trips_and_all_land(tmp_path, mocker):
    batches = mocker.spy(group_commit, "_commit")
    commits = GroupCommit()
    paths = [tmp_path / f"{n}.jsonl" for n in range(20)]
    await asyncio.gather(*(commits.append(SessionLock(p.with_suffix(".lock")), p, b"line\n")
                           for p in paths for _ in range(5)))
    assert all(p.read_bytes() == b"line\n" * 5 for p in paths)
    assert batches.call_count < 100 / 5
    assert not list(tmp_path.glob("*.lock"))


async def test_append_waits_for_a_lock_held_elsewhere(tmp_path):
    target = tmp_path / "t.jsonl"
    lock = _held_lock(tmp_path / "t.lock")
    append = asyncio.create_task(GroupCommit().append(lock, target, b"after\n"))
    await asyncio.sleep(0.2)
    assert not append.done() and not target.exists()
    lock.release()
    await asyncio.wait_for(append, 2)
    assert target.read_bytes() == b"after\n"


async def test_append_times_out_on_a_live_lock(tmp_path, monkeypatch):
    monkeypatch.setattr(group_commit, "LOCK_TIMEOUT_SECONDS", 0.2)
    lock = _held_lock(tmp_path / "t.lock")
    with pytest.raises(TimeoutError, match="held by another process"):
        await GroupCommit().append(lock, tmp_path / "t.jsonl", b"x\n")
    assert not (tmp_path / "t.jsonl").exists()


async def test_a_failed_write_reaches_only_its_caller(tmp_path):
    commits = GroupCommit()
    good, bad = tmp_path / "good.jsonl", tmp_path / "missing" / "bad.jsonl"
    results = await asyncio.gather(
        commits.append(SessionLock(tmp_path / "good.lock"), good, b"ok\n"),
        commits.append(SessionLock(tmp_path / "bad.lock"), bad, b"no\n"),
        return_exceptions=True)
    assert results[0] is None and isinstance(results[1], FileNotFoundError)
    assert good.read_bytes() == b"ok\n"


async def test_written_files_are_fsynced_in_the_same_trip(tmp_path, mocker):
    synced = mocker.spy(group_commit.os, "fsync")
    commits = GroupCommit()
    paths = [tmp_path / f"{n}.jsonl" for n in range(3)]
    await asyncio.gather(*(commits.append(SessionLock(p.with_suffix(".lock")), p, b"x\n")
                           for p in paths for _ in range(2)))
    await commits.flushed()
    assert synced.call_count == 3
