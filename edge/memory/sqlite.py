"""SqliteMemory, the default backend: one ``brain.db`` file, recall in three levels:

1. hybrid: cosine over the in-memory vector matrix, mapped to relevance by the embedder's
   calibration, merged with normalised FTS5 BM25 (0.7 / 0.3 by default), results under
   ``min_relevance`` dropped;
2. BM25 only, when no embedder is configured (or it is unreachable);
3. ``LIKE`` when FTS5 rejects the query.

Every vector is stored with the id of the model that made it. When the configured model differs,
recall refuses with a message naming ``edge-cli memory reindex`` (hygiene re-embeds too).
Storing never loses text: if embedding fails the entry is kept without a vector and logged.

Recall latency (bench/bench_memory.py): every read takes one round trip to aiosqlite's thread
(``execute_fetchall``; ``async with execute`` plus iteration costs three or four, 0.4 ms against
0.1), the keyword query reads FTS5 alone unless a session filter needs the ``memories`` table,
and from ``OVERLAP_MIN_ROWS`` vectors on the numpy product runs in a worker thread while the
FTS5 query runs in aiosqlite's. OpenBLAS already spreads the product over both cores, so the
overlap saves less than the sum (100k: p95 about 10% lower).

The keyword and entry queries of a recall are :mod:`edge.memory.sqlite_recall`'s.
"""

from __future__ import annotations

import asyncio
import builtins
import logging
import secrets
from collections.abc import Iterable
from pathlib import Path
from typing import Any, cast

import aiosqlite

from edge.memory.base import (
    Category,
    EmbeddingError,
    EmbeddingProvider,
    Memory,
    MemoryEntry,
    MemoryFailure,
    NothingToReindex,
    Progress,
    StaleEmbeddings,
)
from edge.memory.calibration import RelevanceCalibration
from edge.memory.embedding_cache import EmbeddingCache, content_hash, now_iso
from edge.memory.ranking import hybrid_merge, normalise_bm25
from edge.memory.sqlite_recall import (
    ENTRY_COLUMNS,
    EVERY_ROW,
    RecallQueries,
    Row,
    Scopes,
    entry,
    recall_within,
)
from edge.memory.sqlite_schema import open_database

log = logging.getLogger(__name__)

CANDIDATES = 50
"""Rows taken from each of vector and keyword search before merging."""
OVERLAP_MIN_ROWS = 30_000
"""From this many vectors the product overlaps the FTS5 query; below it the thread hop costs more
than the overlap saves (10k rows: 0.2 ms slower at p50 and p95)."""
REINDEX_BATCH = 32
SCOPED_OVERFETCH = 4
"""A scoped recall takes this many times more vector candidates before filtering by scope."""


class SqliteMemory(Memory):
    name = "sqlite"

    def __init__(self, path: Path, embedder: EmbeddingProvider, *, vector_weight: float = 0.7,
                 keyword_weight: float = 0.3, min_relevance: float = 0.4,
                 cache_size: int = 10_000, open_timeout: float = 5.0,
                 calibration: RelevanceCalibration | None = None):
        """``calibration``: how cosines map to relevance; None, the embedder's own."""
        self.path = Path(path)
        self.embedder = embedder
        self.calibration = calibration
        self.vector_weight = vector_weight
        self.keyword_weight = keyword_weight
        self.min_relevance = min_relevance
        self.cache_size = cache_size
        self.open_timeout = open_timeout
        self._db: aiosqlite.Connection | None = None
        self._open_lock = asyncio.Lock()
        self._index: Any = None
        self._stale: int | None = None
        self._data_version: int | None = None
        self.wait_for_model = True
        self._queries = RecallQueries(self._fetch)

    @property
    def semantic(self) -> bool:
        return self.embedder.name != "none"

    @property
    def model_ready(self) -> bool:
        """Vectors are computed now: an embedder is configured and may be (or is) loaded."""
        return self.semantic and (self.wait_for_model or self.embedder.loaded)

    def model_to_preload(self) -> EmbeddingProvider | None:
        return self.embedder if self.semantic and not self.embedder.loaded else None

    async def db(self) -> aiosqlite.Connection:
        if self._db is None:
            async with self._open_lock:
                if self._db is None:
                    self._db = await open_database(self.path, self.open_timeout)
        return self._db

    async def close(self) -> None:
        if self._db is not None:
            await self._db.close()
            self._db = None
        await self.embedder.close()

    # -- embeddings -------------------------------------------------------------------------

    async def _embed_blobs(self, texts: builtins.list[str],
                           embedder: EmbeddingProvider | None = None) -> builtins.list[bytes]:
        """One vector BLOB per text, from the cache where possible; the caller commits."""
        from edge.memory.vector_index import VectorIndex

        embedder = embedder or self.embedder
        cache = EmbeddingCache(await self.db(), self.embedder.model_id, self.cache_size)
        cached = await cache.get_many(texts)
        missing = list(dict.fromkeys(t for t in texts if content_hash(t) not in cached))
        if missing:
            vectors = await embedder.embed(missing)
            fresh = [(text, VectorIndex.encode(v)) for text, v in zip(missing, vectors, strict=True)]
            await cache.put_many(fresh)
            cached.update({content_hash(text): blob for text, blob in fresh})
        return [cached[content_hash(t)] for t in texts]

    async def _fetch(self, sql: str, params: Iterable[Any] = ()) -> builtins.list[Row]:
        """Every row of one statement, in one round trip to aiosqlite's thread."""
        return cast("builtins.list[Row]", await (await self.db()).execute_fetchall(sql, params))

    async def _one(self, sql: str, params: Iterable[Any] = ()) -> Row:
        """The single row of a statement that always yields one (a count, an insert's RETURNING)."""
        (row,) = await self._fetch(sql, params)
        return row

    async def _others_wrote(self) -> bool:
        """Whether another connection (``edge-cli memory`` beside the daemon) committed since
        the last look, via ``PRAGMA data_version``."""
        ((version,),) = await self._fetch("PRAGMA data_version")
        changed = self._data_version is not None and version != self._data_version
        self._data_version = version
        return changed

    async def _index_ready(self) -> Any:
        """The vector matrix, loaded on first use and reloaded when another process wrote;
        raises StaleEmbeddings on a model change."""
        if await self._others_wrote():
            self._index = None
        if self._index is None:
            import numpy as np

            from edge.memory.vector_index import VectorIndex

            model_id = self.embedder.model_id
            (self._stale,) = await self._one("SELECT COUNT(*) FROM memories WHERE embedding_model "
                                             "IS NOT NULL AND embedding_model != ?", (model_id,))
            rows = await self._fetch("SELECT num, embedding FROM memories WHERE embedding_model = ?",
                                     (model_id,))
            index = VectorIndex(len(rows[0][1]) // 4 if rows else self.embedder.dimensions)
            if rows:
                matrix = np.frombuffer(b"".join(blob for _, blob in rows), dtype="<f4")
                index.put_many([num for num, _ in rows], matrix.reshape(len(rows), -1))
            self._index = index
        if self._stale:
            raise StaleEmbeddings(
                f"{self._stale} memories were embedded with another model than "
                f"{self.embedder.model_id}; run `edge-cli memory reindex` to re-embed them "
                "(the agent's hygiene does it too)")
        return self._index

    # -- writes -----------------------------------------------------------------------------

    async def store(self, key: str, content: str, category: Category,
                    session_id: str | None = None) -> None:
        await self.store_many([(key, content, category, session_id)])

    async def store_many(self, items: list[tuple[str, str, Category, str | None]]) -> None:
        """Upsert several entries in one transaction (hydration, imports, benchmarks)."""
        for key, content, _, _ in items:
            if not key.strip() or not content.strip():
                raise MemoryFailure("a memory needs a non-empty key and content")
        db = await self.db()
        blobs: list[bytes | None] = [None] * len(items)
        model_id = None
        if self.model_ready:
            try:
                blobs = list(await self._embed_blobs([content for _, content, _, _ in items]))
                model_id = self.embedder.model_id
            except EmbeddingError as exc:
                log.warning("memory_store_unembedded count=%d reason=%s", len(items), exc)
        stamp = now_iso()
        nums = []
        for (key, content, category, session_id), blob in zip(items, blobs, strict=True):
            (num,) = await self._one(
                    "INSERT INTO memories (id, key, content, category, embedding, embedding_model, "
                    "created_at, updated_at, session_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
                    "ON CONFLICT(key) DO UPDATE SET id = excluded.id, content = excluded.content, "
                    "category = excluded.category, embedding = excluded.embedding, "
                    "embedding_model = excluded.embedding_model, updated_at = excluded.updated_at, "
                    "session_id = excluded.session_id RETURNING num",
                    (secrets.token_hex(16), key, content, category.value, blob,
                     model_id if blob else None, stamp, stamp, session_id))
            nums.append(num)
        await db.commit()
        if self._index is not None:
            from edge.memory.vector_index import VectorIndex

            for num, blob in zip(nums, blobs, strict=True):
                if blob:
                    self._index.put(num, VectorIndex.decode(blob))
                else:
                    self._index.remove(num)

    async def forget(self, key: str) -> bool:
        deleted = await self._fetch("DELETE FROM memories WHERE key = ? RETURNING num", (key,))
        await (await self.db()).commit()
        if self._index is not None:
            for (num,) in deleted:
                self._index.remove(num)
        return bool(deleted)

    async def delete_older_than(self, category: Category, cutoff_iso: str) -> int:
        nums = [num for (num,) in await self._fetch(
            "DELETE FROM memories WHERE category = ? AND updated_at < ? RETURNING num",
            (category.value, cutoff_iso))]
        await (await self.db()).commit()
        if self._index is not None:
            for num in nums:
                self._index.remove(num)
        return len(nums)

    # -- reads ------------------------------------------------------------------------------

    async def get(self, key: str) -> MemoryEntry | None:
        rows = await self._fetch(f"SELECT {ENTRY_COLUMNS} FROM memories WHERE key = ?", (key,))
        return entry(rows[0]) if rows else None

    async def list(self, category: Category | None = None,
                   session_id: str | None = None) -> builtins.list[MemoryEntry]:
        sql = f"SELECT {ENTRY_COLUMNS} FROM memories WHERE (? IS NULL OR category = ?) " \
              "AND (? IS NULL OR session_id = ?) ORDER BY updated_at DESC"
        value = category.value if category else None
        return [entry(row) for row in await self._fetch(sql, (value, value, session_id, session_id))]

    async def count(self) -> int:
        (count,) = await self._one("SELECT COUNT(*) FROM memories")
        return int(count)

    async def health_check(self) -> bool:
        try:
            return await self._one("SELECT 1") == (1,)
        except (MemoryFailure, aiosqlite.Error):
            return False

    async def keyword_search(self, query: str, limit: int, session_id: str | None = None, *,
                             scopes: Scopes | None = None) -> builtins.list[tuple[int, float]]:
        """``(num, keyword relevance)``, best first (:meth:`RecallQueries.keywords`)."""
        return await self._queries.keywords(query, limit, recall_within(session_id, scopes))

    async def recall(self, query: str, limit: int = 5, session_id: str | None = None, *,
                     scopes: Scopes | None = None) -> builtins.list[MemoryEntry]:
        if not query.strip() or limit <= 0:
            return []
        query_vector = None
        if self.model_ready:
            await self._index_ready()
            try:
                from edge.memory.vector_index import VectorIndex

                query_vector = VectorIndex.decode((await self._embed_blobs([query]))[0])
                await (await self.db()).commit()
            except EmbeddingError as exc:
                log.warning("memory_recall_keyword_only reason=%s", exc)
        return await self.recall_by_vector(query, query_vector, limit, session_id, scopes=scopes)

    async def recall_by_vector(self, query: str, query_vector: Any, limit: int = 5,
                               session_id: str | None = None, *,
                               scopes: Scopes | None = None) -> builtins.list[MemoryEntry]:
        """Recall with the query's vector already computed (None: BM25 only)."""
        candidates = max(CANDIDATES, limit)
        within = recall_within(session_id, scopes)
        if query_vector is None:
            keyword = await self.keyword_search(query, candidates, session_id, scopes=scopes)
            return await self._queries.entries(normalise_bm25(keyword), within, limit)
        index = await self._index_ready()
        # the vector index is not scoped: take more candidates so others' do not crowd one out
        nearest = candidates * SCOPED_OVERFETCH if within[0] != EVERY_ROW else candidates
        if len(index) < OVERLAP_MIN_ROWS:
            keyword = await self.keyword_search(query, candidates, session_id, scopes=scopes)
            vector = index.search(query_vector, nearest)
        else:
            searching = asyncio.get_running_loop().run_in_executor(
                None, index.search, query_vector, nearest)
            try:
                keyword = await self.keyword_search(query, candidates, session_id, scopes=scopes)
            finally:
                vector = await searching
        if self.calibration is None:
            self.calibration = self.embedder.calibration
        merged = hybrid_merge(vector, keyword, self.vector_weight, self.keyword_weight,
                              len(vector) + len(keyword), self.calibration)
        relevant = [(num, score) for num, score in merged if score >= self.min_relevance]
        return await self._queries.entries(relevant, within, limit)

    # -- upkeep -----------------------------------------------------------------------------

    async def reindex(self, progress: Progress | None = None, only_stale: bool = False) -> int:
        """Re-embed every entry (or those without a current vector); returns how many."""
        if not self.semantic:
            raise NothingToReindex("no embedder is configured ([memory] embedder = \"none\"); "
                                   "nothing to reindex")
        db = await self.db()
        model_id = self.embedder.model_id
        where = "WHERE embedding_model IS NULL OR embedding_model != ?" if only_stale else ""
        rows = await self._fetch(f"SELECT num, content FROM memories {where} ORDER BY num",
                                 (model_id,) if only_stale else ())
        # onnx's bulk embedder is a second model instance: worth loading only for many rows
        embedder = self.embedder.bulk() if len(rows) > REINDEX_BATCH else self.embedder
        done = 0
        for start in range(0, len(rows), REINDEX_BATCH):
            batch = rows[start:start + REINDEX_BATCH]
            blobs = await self._embed_blobs([content for _, content in batch], embedder)
            await db.executemany("UPDATE memories SET embedding = ?, embedding_model = ? WHERE num = ?",
                                 [(blob, model_id, num) for (num, _), blob in zip(batch, blobs, strict=True)])
            await db.commit()
            done += len(batch)
            if progress:
                progress(done, len(rows))
        self._index = None
        self._stale = None
        return done

    def _model_label(self) -> str:
        """The model for reports, never prepared for them (``memory stats`` needs no model)."""
        if not self.semantic:
            return "none"
        return self.embedder.known_model_id or f"{self.embedder.name} (not prepared yet)"

    async def stats(self) -> dict[str, Any]:
        db = await self.db()
        async with db.execute("SELECT category, COUNT(*) FROM memories GROUP BY category") as cur:
            by_category = {category: n async for category, n in cur}
        async with db.execute("SELECT COALESCE(embedding_model, ''), COUNT(*) FROM memories "
                              "GROUP BY embedding_model") as cur:
            by_model = {model or "(none)": n async for model, n in cur}
        cache = await EmbeddingCache(db, "", self.cache_size).size()
        return {"backend": self.name, "path": str(self.path), "count": sum(by_category.values()),
                "by_category": by_category, "embedder": self.embedder.name,
                "model": self._model_label(),
                "vectors_by_model": by_model, "embedding_cache": cache,
                "bytes": self.path.stat().st_size if self.path.exists() else 0}
