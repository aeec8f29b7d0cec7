"""The persistent embedding cache: key = first 16 hex chars of SHA-256 of the text, one row per
text with the model that produced it, LRU eviction done in SQL so it survives restarts.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime

import aiosqlite


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


class EmbeddingCache:
    def __init__(self, db: aiosqlite.Connection, model_id: str, capacity: int):
        self.db = db
        self.model_id = model_id
        self.capacity = capacity

    async def get_many(self, texts: list[str]) -> dict[str, bytes]:
        """Cached vectors (as BLOBs) by text hash, marking them used."""
        if self.capacity <= 0 or not texts:
            return {}
        hashes = sorted({content_hash(t) for t in texts})
        found: dict[str, bytes] = {}
        for start in range(0, len(hashes), 500):
            chunk = hashes[start:start + 500]
            marks = ",".join("?" * len(chunk))
            async with self.db.execute(
                    f"SELECT content_hash, embedding FROM embedding_cache "
                    f"WHERE model = ? AND content_hash IN ({marks})", (self.model_id, *chunk)) as cur:
                found.update({h: blob async for h, blob in cur})
        if found:
            stamp = now_iso()
            await self.db.executemany("UPDATE embedding_cache SET accessed_at = ? WHERE content_hash = ?",
                                      [(stamp, h) for h in found])
        return found

    async def put_many(self, items: list[tuple[str, bytes]]) -> None:
        """Store ``(text, blob)`` pairs, then evict the least recently used beyond capacity.
        The caller commits."""
        if self.capacity <= 0 or not items:
            return
        stamp = now_iso()
        await self.db.executemany(
            "INSERT INTO embedding_cache (content_hash, model, embedding, created_at, accessed_at) "
            "VALUES (?, ?, ?, ?, ?) ON CONFLICT(content_hash) DO UPDATE SET model = excluded.model, "
            "embedding = excluded.embedding, accessed_at = excluded.accessed_at",
            [(content_hash(text), self.model_id, blob, stamp, stamp) for text, blob in items])
        await self.evict()

    async def evict(self) -> None:
        await self.db.execute(
            "DELETE FROM embedding_cache WHERE content_hash IN ("
            " SELECT content_hash FROM embedding_cache ORDER BY accessed_at ASC"
            " LIMIT MAX(0, (SELECT COUNT(*) FROM embedding_cache) - ?))", (self.capacity,))

    async def size(self) -> int:
        ((count,),) = await self.db.execute_fetchall("SELECT COUNT(*) FROM embedding_cache")
        return int(count)
