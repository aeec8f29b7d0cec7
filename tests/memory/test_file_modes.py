"""Every file holding memory or conversation is 0600 whatever the umask (issue 15): brain.db and
its -wal and -shm, MEMORY.md and the daily notes, the snapshot; also files left 0644 by an
older version are tightened when opened."""

from __future__ import annotations

import os
import stat

import pytest

from edge.config.model import MemoryConfig
from edge.memory.base import Category
from edge.memory.conversation import autosave_user_message
from edge.memory.factory import build_memory, database_path, snapshot_path
from edge.memory.hygiene import run_hygiene
from edge.memory.markdown import MarkdownMemory


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.fixture
def open_umask():
    """The loosest umask: nothing but the code's own modes keeps these files private."""
    old = os.umask(0)
    yield
    os.umask(old)


async def test_sqlite_database_wal_shm_and_snapshot_are_private(tmp_path, open_umask):
    memory = await build_memory(MemoryConfig(embedder="none"), tmp_path)
    await memory.store("wifi", "the wifi password is hunter2", Category.CORE)
    await autosave_user_message(memory, "my pump password is swordfish", "telegram:42",
                                session_id="telegram:42")
    db = database_path(tmp_path)
    journals = [f"{db}-wal", f"{db}-shm"]
    assert all(os.path.exists(j) for j in journals)
    assert [mode(p) for p in (db, *journals)] == [0o600] * 3
    assert mode(db.parent) == 0o700
    await run_hygiene(memory, MemoryConfig(embedder="none"), snapshot_path(tmp_path))
    assert mode(snapshot_path(tmp_path)) == 0o600
    await memory.close()


async def test_files_left_readable_by_an_older_version_are_tightened(tmp_path, open_umask):
    memory = await build_memory(MemoryConfig(embedder="none"), tmp_path)
    await memory.store("wifi", "the wifi password is hunter2", Category.CORE)
    db = database_path(tmp_path)
    os.chmod(db, 0o644)
    os.chmod(f"{db}-wal", 0o644)
    second = await build_memory(MemoryConfig(embedder="none"), tmp_path)
    assert await second.count() == 1
    assert mode(db) == 0o600 and mode(f"{db}-wal") == 0o600
    await second.close()
    await memory.close()


async def test_markdown_memory_and_daily_notes_are_private(tmp_path, open_umask):
    memory = MarkdownMemory(tmp_path)
    (tmp_path / "MEMORY.md").write_text("")
    os.chmod(tmp_path / "MEMORY.md", 0o644)
    await memory.store("wifi", "the wifi password is hunter2", Category.CORE)
    await memory.store("today", "watered the garden", Category.DAILY)
    (daily,) = (tmp_path / "memory").glob("*.md")
    assert mode(tmp_path / "MEMORY.md") == 0o600 and mode(daily) == 0o600
    assert mode(tmp_path / "memory") == 0o700
