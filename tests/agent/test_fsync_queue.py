"""Transcript appends: written at once under the session lock, fsynced in background rounds."""

from __future__ import annotations

import asyncio
import json
import os
import time

from edge.agent import fsync_queue
from edge.agent.fsync_queue import FsyncQueue
from edge.agent.sessions import SessionStore
from edge.core.messages import ChatMessage


async def test_files_marked_together_are_fsynced_once_each_in_one_round(tmp_path, mocker):
    rounds = mocker.spy(fsync_queue, "fsync_all")
    synced = mocker.spy(fsync_queue.os, "fsync")
    queue = FsyncQueue()
    paths = [tmp_path / f"{n}.jsonl" for n in range(3)]
    for path in paths * 2:
        fsync_queue.append_bytes(path, b"x\n")
        queue.mark(path)
    await queue.flushed()
    assert rounds.call_count == 1 and synced.call_count == 3
    assert all(p.read_bytes() == b"x\nx\n" for p in paths)


async def test_a_file_that_vanished_is_logged_not_fatal(tmp_path, caplog):
    queue = FsyncQueue()
    queue.mark(tmp_path / "gone.jsonl")
    await queue.flushed()
    assert "transcript_fsync_failed" in caplog.text


async def test_append_is_on_disk_when_it_returns_and_synced_by_close(tmp_path, mocker):
    synced = mocker.spy(fsync_queue.os, "fsync")
    store = SessionStore(tmp_path)
    session = await store.open("k")
    await store.append(session, [ChatMessage.user("one"), ChatMessage.assistant("two")])
    lines = store.transcript_path(session.entry).read_text().splitlines()
    assert [json.loads(line)["content"] for line in lines] == ["one", "two"]
    await store.close()
    assert synced.call_count >= 1


async def test_append_waits_while_another_process_holds_the_session_lock(tmp_path):
    store = SessionStore(tmp_path)
    session = await store.open("k")
    lock = store.lock(session.entry).path
    lock.write_text(json.dumps({"pid": os.getpid(), "created_at": time.time()}))
    append = asyncio.create_task(store.append(session, [ChatMessage.user("later")]))
    await asyncio.sleep(0.2)
    assert not append.done() and not store.transcript_path(session.entry).exists()
    lock.unlink()
    await asyncio.wait_for(append, 2)
    assert "later" in store.transcript_path(session.entry).read_text()
