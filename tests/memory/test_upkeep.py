"""Hygiene (retention, snapshot, re-embedding), cold-start hydration from MEMORY_SNAPSHOT.md,
and the factory's choice of backend."""

import sqlite3
from datetime import UTC, datetime, timedelta

from edge.config.model import MemoryConfig
from edge.memory.base import Category
from edge.memory.embedders import create_embedder
from edge.memory.factory import build_memory, database_path, snapshot_path
from edge.memory.hygiene import run_hygiene
from edge.memory.snapshot import parse_snapshot, render_snapshot
from edge.memory.sqlite import SqliteMemory


def backdate(path, key, days):
    stamp = (datetime.now(UTC) - timedelta(days=days)).isoformat(timespec="microseconds")
    with sqlite3.connect(path) as db:
        db.execute("UPDATE memories SET updated_at = ? WHERE key = ?", (stamp, key))


async def test_hygiene_deletes_old_conversations_and_snapshots_core(tmp_path):
    config = MemoryConfig(embedder="none", conversation_retention_days=30)
    memory = await build_memory(config, tmp_path)
    await memory.store("old-chat", "what time is it in Lisbon right now", Category.CONVERSATION)
    await memory.store("new-chat", "switch the pond pump on please", Category.CONVERSATION)
    await memory.store("old-core", "The user prefers Celsius", Category.CORE)
    await memory.store("pump", "Relay two controls the pond pump\n## not a heading", Category.CORE)
    backdate(memory.path, "old-chat", 31)
    backdate(memory.path, "old-core", 400)

    report = await run_hygiene(memory, config, snapshot_path(tmp_path))
    assert report.conversations_deleted == 1 and report.snapshot_entries == 2
    assert {e.key for e in await memory.list()} == {"new-chat", "old-core", "pump"}
    text = snapshot_path(tmp_path).read_text()
    assert "## pump" in text and "\\## not a heading" in text and "new-chat" not in text
    await memory.close()


async def test_missing_database_is_hydrated_from_the_snapshot(model_state_dir):
    config = MemoryConfig()
    state = model_state_dir  # holds the session's re-quantised model already
    first = await build_memory(config, state)
    await first.store("pump", "Relay two controls the pond pump", Category.CORE)
    await first.store("wifi", "The wifi password is on the router", Category.CORE)
    await first.store("chat", "tell me a joke about relays please", Category.CONVERSATION)
    await run_hygiene(first, config, snapshot_path(state))
    await first.close()
    database_path(state).unlink()

    restored = await build_memory(config, state)
    try:
        assert {e.key for e in await restored.list()} == {"pump", "wifi"}
        assert (await restored.get("pump")).category == Category.CORE
        assert (await restored.recall("what is the internet password"))[0].key == "wifi"
    finally:
        await restored.close()


def test_snapshot_round_trip_keeps_multiline_content_and_owners():
    class E:
        def __init__(self, key, content, session_id=None):
            self.key, self.content, self.session_id = key, content, session_id
    text = render_snapshot([E("b", "line one\n\\ backslash\n## fake heading"), E("a", "x"),
                            E("telegram:42/c", "<!-- scope shared -->\nmine", "telegram:42")])
    assert parse_snapshot(text) == [("a", "x", None),
                                    ("b", "line one\n\\ backslash\n## fake heading", None),
                                    ("telegram:42/c", "<!-- scope shared -->\nmine", "telegram:42")]


async def test_hygiene_reembeds_entries_from_another_model(tmp_path, embedder):
    from edge.memory.sqlite import SqliteMemory
    memory = SqliteMemory(tmp_path / "brain.db", embedder)
    await memory.store("wifi", "The wifi password is on the router", Category.CORE)
    with sqlite3.connect(memory.path) as db:
        db.execute("UPDATE memories SET embedding_model = 'old'")
    memory._index = None
    report = await run_hygiene(memory, MemoryConfig(snapshot_on_hygiene=False), tmp_path / "s.md")
    assert report.reindexed == 1 and report.snapshot_entries is None
    assert (await memory.recall("internet password"))[0].key == "wifi"
    await memory.close()


async def test_markdown_backend_is_append_only_and_readable(tmp_path):
    memory = await build_memory(MemoryConfig(backend="markdown"), tmp_path)
    await memory.store("tz", "The user lives in Porto", Category.CORE)
    await memory.store("tz", "The user lives in Lisbon", Category.CORE)
    await memory.store("log", "Watered the tomatoes", Category.DAILY, "cli:pi")
    assert (tmp_path / "MEMORY.md").read_text().count("- **tz** (core, ") == 2
    daily = list((tmp_path / "memory").glob("*.md"))
    assert len(daily) == 1 and "- **log** (daily, " in daily[0].read_text()
    assert (await memory.get("tz")).content == "The user lives in Lisbon"
    found = await memory.recall("where does the user live, Lisbon?")
    assert found[0].key == "tz" and 0 < found[0].score <= 1
    assert (await memory.get("log")).session_id == "cli:pi"
    assert await memory.forget("tz") is False and await memory.count() == 2
    await run_hygiene(memory, MemoryConfig(), snapshot_path(tmp_path))
    assert "## tz" in snapshot_path(tmp_path).read_text()


async def test_none_backend_stores_nothing(tmp_path):
    memory = await build_memory(MemoryConfig(backend="none"), tmp_path)
    await memory.store("k", "v", Category.CORE)
    assert await memory.recall("v") == [] and await memory.count() == 0
    assert await memory.health_check() and not list(tmp_path.iterdir())


async def test_the_agent_never_waits_for_the_model_and_embeds_what_it_stored_once_loaded(
        tmp_path, model_state_dir, embedder):
    onnx = create_embedder(MemoryConfig(), model_state_dir)  # the same model, not loaded yet
    store = SqliteMemory(tmp_path / "brain.db", onnx)
    store.wait_for_model = False
    await store.store("pump", "The greenhouse pump runs at dawn", Category.CORE)
    found = await store.recall("greenhouse pump")
    assert [e.key for e in found] == ["pump"] and not onnx.loaded
    with sqlite3.connect(tmp_path / "brain.db") as db:
        assert db.execute("SELECT embedding FROM memories").fetchone()[0] is None
    onnx.load()
    assert await store.reindex(only_stale=True) == 1
    with sqlite3.connect(tmp_path / "brain.db") as db:
        assert db.execute("SELECT embedding_model FROM memories").fetchone()[0] == onnx.model_id
    await store.close()
