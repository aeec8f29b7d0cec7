"""The SQL behind SqliteMemory's recall: which rows a recall may see, keyword search (FTS5 BM25,
``LIKE`` when FTS5 rejects the query) and the entries for ranked row numbers.

:class:`RecallQueries` runs every statement through one fetch function (one round trip to
aiosqlite's thread each); the ranking itself is :mod:`edge.memory.ranking`'s, and merging with the
vector half is :class:`~edge.memory.sqlite.SqliteMemory`'s.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Collection, Iterable
from typing import Any

import aiosqlite

from edge.memory.base import Category, MemoryEntry
from edge.memory.ranking import (
    drop_common_terms,
    fts_query,
    fts_terms,
    full_match_bm25,
    keyword_relevance,
    like_terms,
)

log = logging.getLogger(__name__)

ENTRY_COLUMNS = "num, id, key, content, category, updated_at, session_id"

Row = tuple[Any, ...]
Fetch = Callable[[str, Iterable[Any]], Awaitable[list[Row]]]
"""Every row of one statement with its parameters."""
Scopes = Collection[str | None]
Within = tuple[str, tuple[Any, ...]]
"""A ``WHERE`` condition on ``session_id`` and its parameters (``EVERY_ROW``: no filter)."""
EVERY_ROW = "1"


def recall_within(session_id: str | None, scopes: Scopes | None) -> Within:
    """The rows a recall may return: one session, and/or only the given scopes (``None`` in
    ``scopes`` is the unscoped, shared entries)."""
    conditions: list[str] = []
    params: list[Any] = []
    if session_id is not None:
        conditions.append("session_id = ?")
        params.append(session_id)
    if scopes is not None:
        named = sorted(s for s in scopes if s is not None)
        either = [f"session_id IN ({','.join('?' * len(named))})"] if named else []
        if None in scopes:
            either.append("session_id IS NULL")
        conditions.append(f"({' OR '.join(either)})" if either else "0")
        params.extend(named)
    return (" AND ".join(conditions), tuple(params)) if conditions else (EVERY_ROW, ())


def entry(row: Row, score: float | None = None) -> MemoryEntry:
    """The entry of a row read with :data:`ENTRY_COLUMNS`."""
    _, id_, key, content, category, updated_at, session_id = row
    return MemoryEntry(id_, key, content, Category.parse(category), updated_at, session_id, score)


class RecallQueries:
    """The statements a recall runs, over ``fetch``."""

    def __init__(self, fetch: Fetch):
        self._fetch = fetch

    async def entries(self, scored: list[tuple[int, float]], within: Within,
                      limit: int) -> list[MemoryEntry]:
        """The entries for ``(num, score)`` pairs in one query, in score order."""
        if not scored:
            return []
        marks = ",".join("?" * len(scored))
        where, params = within
        found = await self._fetch(f"SELECT {ENTRY_COLUMNS} FROM memories WHERE num IN ({marks}) "
                                  f"AND {where}", (*[num for num, _ in scored], *params))
        rows = {row[0]: row for row in found}
        return [entry(rows[num], score) for num, score in scored if num in rows][:limit]

    async def keywords(self, query: str, limit: int, within: Within) -> list[tuple[int, float]]:
        """``(num, keyword relevance)``, best first: BM25 as a share of a full match
        (``ranking.keyword_relevance``), or the fraction of words found by LIKE if FTS5 refuses.

        Only a session filter reads ``memories`` (joining it for every match doubled the cost at
        100k rows); ``ORDER BY score DESC LIMIT`` keeps a top-k sorter, where FTS5's own ``ORDER
        BY rank`` sorts every match and measured slower."""
        terms, full = await self._selective_terms(fts_terms(query))
        match = fts_query(terms)
        if match:
            where, params = within
            only = f" AND rowid IN (SELECT num FROM memories WHERE {where})" \
                if where != EVERY_ROW else ""
            try:
                return keyword_relevance(await self._fetch(
                    "SELECT rowid, -bm25(memories_fts) AS score FROM memories_fts "
                    f"WHERE memories_fts MATCH ?{only} ORDER BY score DESC LIMIT ?",
                    (match, *params, limit)), full)
            except aiosqlite.OperationalError as exc:
                log.info("memory_recall_like_fallback reason=%s", exc)
        return await self._like(query, limit, within)

    async def _selective_terms(self, terms: list[str]) -> tuple[list[str], float | None]:
        """The terms worth searching, and the score of a full match (None for one term)."""
        if len(terms) < 2:
            return terms, None
        lowered = [t.lower() for t in terms]
        marks = ",".join("?" * len(lowered))
        # One round trip: the row with the empty term (FTS5 never yields one) carries the total.
        counts: dict[str, int] = dict(await self._fetch(
            "SELECT '', COALESCE(MAX(num), 0) FROM memories UNION ALL "
            f"SELECT term, doc FROM memories_fts_terms WHERE term IN ({marks})", lowered))
        total = counts.pop("")
        return drop_common_terms(terms, counts, total), full_match_bm25(terms, counts, total)

    async def _like(self, query: str, limit: int, within: Within) -> list[tuple[int, float]]:
        terms = like_terms(query)
        hits = " + ".join(["((key LIKE ? ESCAPE '\\') OR (content LIKE ? ESCAPE '\\'))"] * len(terms))
        params = [p for term in terms for p in (term, term)]
        where, scoped = within
        found = await self._fetch(
            f"SELECT num, ({hits}) AS hits FROM memories WHERE hits > 0 "
            f"AND {where} ORDER BY hits DESC, updated_at DESC LIMIT ?",
            (*params, *scoped, limit))
        return [(num, hits / len(terms)) for num, hits in found]
