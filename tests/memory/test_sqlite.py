"""SqliteMemory on real database files: upsert, FTS5 triggers, the three recall levels, the
embedding cache, model changes, and writes from another connection."""

import asyncio
import sqlite3

import pytest

from edge.memory.base import Category, MemoryFailure, StaleEmbeddings
from edge.memory.embedders import NoopEmbedding
from edge.memory.sqlite import SqliteMemory
from edge.memory.sqlite_schema import open_database

CORPUS = {
    "irrigation": "Drip irrigation for the tomato beds runs every morning at seven",
    "water-bill": "Pay the water bill before the end of the month",
    "wifi": "The wifi password is written on the router",
    "isp": "Internet provider contract: internet bill paid by card, internet support line open weekdays",
    "cat": "Feed the cat twice a day, dry food only",
    "pump-relay": "Relay two controls the pond pump",
}


async def fill(memory):
    await memory.store_many([(k, v, Category.CORE, None) for k, v in CORPUS.items()])


def fts_rows(path, word):
    with sqlite3.connect(path) as db:
        return [r[0] for r in db.execute(
            "SELECT m.key FROM memories_fts f JOIN memories m ON m.num = f.rowid "
            "WHERE memories_fts MATCH ?", (f'"{word}"',))]


async def test_store_upserts_on_key(memory):
    await memory.store("tz", "The user lives in Porto", Category.CORE)
    first = await memory.get("tz")
    await memory.store("tz", "The user lives in Lisbon", Category.DAILY, "telegram:42")
    entry = await memory.get("tz")
    assert await memory.count() == 1
    assert (entry.content, entry.category, entry.session_id) == \
        ("The user lives in Lisbon", Category.DAILY, "telegram:42")
    assert entry.score is None and entry.id != first.id and entry.timestamp >= first.timestamp


async def test_fts_follows_updates_and_deletes(memory):
    await memory.store("tz", "The user lives in Porto", Category.CORE)
    assert fts_rows(memory.path, "porto") == ["tz"]
    await memory.store("tz", "The user lives in Lisbon", Category.CORE)
    assert fts_rows(memory.path, "porto") == [] and fts_rows(memory.path, "lisbon") == ["tz"]
    assert await memory.forget("tz") is True
    assert fts_rows(memory.path, "lisbon") == []
    assert await memory.forget("tz") is False


async def test_hybrid_ranks_right_where_keywords_alone_rank_wrong(memory, tmp_path):
    keywords_only = SqliteMemory(tmp_path / "keywords.db", NoopEmbedding())
    await fill(memory)
    await fill(keywords_only)
    query = "what is the internet password"
    by_keyword = await keywords_only.recall(query)
    by_hybrid = await memory.recall(query)
    await keywords_only.close()
    assert [e.key for e in by_keyword][:2] == ["isp", "wifi"]
    assert by_hybrid[0].key == "wifi"
    assert all(e.score >= 0.4 for e in by_hybrid)
    assert [e.score for e in by_hybrid] == sorted((e.score for e in by_hybrid), reverse=True)


async def test_results_below_the_relevance_threshold_are_dropped(memory):
    await fill(memory)
    assert await memory.recall("quantum chromodynamics lecture notes") == []


async def test_like_fallback_when_fts5_rejects_the_query(memory):
    await fill(memory)
    hits = await memory.keyword_search("pond\x00pump", 5)  # FTS5: "unterminated string"
    assert hits and hits[0][1] == 1.0
    assert (await memory.recall("pond\x00pump"))[0].key == "pump-relay"


async def test_recall_filters_by_session(memory):
    await memory.store("a", "The pond pump is on relay two", Category.CONVERSATION, "telegram:1")
    await memory.store("b", "The pond pump is on relay three", Category.CONVERSATION, "telegram:2")
    found = await memory.recall("pond pump relay", session_id="telegram:2")
    assert [e.key for e in found] == ["b"]


async def test_keyword_search_filters_by_session_before_ranking(tmp_path):
    keywords_only = SqliteMemory(tmp_path / "keywords.db", NoopEmbedding())
    await keywords_only.store("a", "The pond pump is on relay two", Category.CONVERSATION, "telegram:1")
    await keywords_only.store("b", "The pond pump is on relay three", Category.CONVERSATION, "telegram:2")
    hits = await keywords_only.keyword_search("pond pump", 5, session_id="telegram:2")
    unfiltered = await keywords_only.keyword_search("pond pump", 5)
    found = await keywords_only.recall("pond pump", session_id="telegram:1")
    await keywords_only.close()
    with sqlite3.connect(tmp_path / "keywords.db") as db:
        (b_num,), = db.execute("SELECT num FROM memories WHERE key = 'b'")
    assert [num for num, _ in hits] == [b_num] and hits[0][1] > 0 and len(unfiltered) == 2
    assert [e.key for e in found] == ["a"]


async def test_overlapped_vector_search_ranks_as_the_inline_one(memory, monkeypatch):
    await fill(memory)
    queries = ["what is the internet password", "pond pump relay", "when do I feed the cat"]
    inline = [[(e.key, e.score) for e in await memory.recall(q)] for q in queries]
    monkeypatch.setattr("edge.memory.sqlite.OVERLAP_MIN_ROWS", 0)
    overlapped = [[(e.key, e.score) for e in await memory.recall(q)] for q in queries]
    assert overlapped == inline and inline[0][0][0] == "wifi"


async def test_stores_and_forgets_during_overlapped_recalls_keep_the_index_right(memory, monkeypatch):
    monkeypatch.setattr("edge.memory.sqlite.OVERLAP_MIN_ROWS", 0)
    await fill(memory)
    vector = (await memory._embed_blobs(["router password"]))[0]
    from edge.memory.vector_index import VectorIndex
    query = VectorIndex.decode(vector)

    async def churn():
        for i in range(20):
            await memory.store(f"note{i}", f"Shopping list item {i}: bread and milk", Category.DAILY)
            if i % 2:
                await memory.forget(f"note{i - 1}")

    results = await asyncio.gather(churn(), *[memory.recall_by_vector("router password", query)
                                              for _ in range(20)])
    assert all(found and found[0].key == "wifi" for found in results[1:])
    index = await memory._index_ready()
    with sqlite3.connect(memory.path) as db:
        nums = {num for (num,) in db.execute("SELECT num FROM memories")}
    assert {n for n in nums if n in index} == nums and len(index) == len(nums)


async def test_embedding_cache_evicts_least_recently_used(tmp_path, embedder):
    small = SqliteMemory(tmp_path / "cache.db", embedder, cache_size=3)
    for i, text in enumerate(["alpha one", "beta two", "gamma three"]):
        await small.store(f"k{i}", text, Category.CORE)
    await small.recall("alpha one")      # touches "alpha one" (and caches the query: same text)
    await small.store("k3", "delta four", Category.CORE)
    with sqlite3.connect(small.path) as db:
        rows = db.execute("SELECT content_hash FROM embedding_cache").fetchall()
    await small.close()
    from edge.memory.embedding_cache import content_hash
    assert {r[0] for r in rows} == {content_hash(t) for t in ("alpha one", "gamma three", "delta four")}


async def test_a_model_change_refuses_recall_until_reindexed(tmp_path, embedder):
    path = tmp_path / "brain.db"
    old = SqliteMemory(path, embedder)
    await fill(old)
    await old.close()
    with sqlite3.connect(path) as db:
        db.execute("UPDATE memories SET embedding_model = 'some-older-model'")
    reopened = SqliteMemory(path, embedder)
    with pytest.raises(StaleEmbeddings, match="edge-cli memory reindex"):
        await reopened.recall("internet password")
    progress = []
    assert await reopened.reindex(lambda done, total: progress.append((done, total))) == len(CORPUS)
    assert progress[-1] == (len(CORPUS), len(CORPUS))
    assert (await reopened.recall("internet password"))[0].key == "wifi"
    await reopened.close()


async def test_writes_from_another_connection_reach_the_vector_index(memory, tmp_path, embedder):
    await fill(memory)
    assert (await memory.recall("internet password"))[0].key == "wifi"   # index now loaded
    other = SqliteMemory(memory.path, embedder)
    await other.store("router", "The router admin password is on a sticker under the router",
                      Category.CORE)
    await other.forget("wifi")
    await other.close()
    keys = [e.key for e in await memory.recall("router password")]
    assert keys[0] == "router" and "wifi" not in keys


async def test_store_refuses_empty_key_or_content(memory):
    with pytest.raises(MemoryFailure, match="non-empty"):
        await memory.store(" ", "text", Category.CORE)


async def test_opening_a_locked_database_times_out(tmp_path):
    path = tmp_path / "locked.db"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("PRAGMA journal_mode = DELETE")
    holder.execute("CREATE TABLE t (x)")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        started = asyncio.get_running_loop().time()
        with pytest.raises(MemoryFailure, match="timed out|locked"):
            await open_database(path, timeout=0.5)
        assert asyncio.get_running_loop().time() - started < 5
    finally:
        holder.execute("ROLLBACK")
        holder.close()


async def test_list_count_and_health(memory):
    await memory.store("a", "one", Category.CORE)
    await memory.store("b", "two", Category.parse("garden"))
    assert [e.key for e in await memory.list(Category.parse("garden"))] == ["b"]
    assert {e.key for e in await memory.list()} == {"a", "b"}
    assert await memory.count() == 2 and await memory.health_check() is True
    stats = await memory.stats()
    assert stats["by_category"] == {"core": 1, "garden": 1}
    assert stats["vectors_by_model"] == {memory.embedder.model_id: 2}
