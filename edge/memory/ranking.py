"""Query building and score merging for hybrid recall (seed 002_9a1873f4f488f98f.txt).

Every query word is quoted for FTS5 and the words are OR-ed; common English stop words are
dropped first unless nothing else is left (a 10x saving at 100k rows, shared/notes/embeddings.md).
BM25 scores (negated, larger is better) are normalised to [0, 1] by the best one, then merged as
``vector_weight * cosine + keyword_weight * bm25``.

>>> fts_query('what is the "pump" schedule?')
'"pump" OR "schedule"'
>>> hybrid_merge([(1, 0.9)], [(2, 4.0), (1, 2.0)], 0.7, 0.3, 5)
[(1, 0.78), (2, 0.3)]
"""

from __future__ import annotations

import re

STOP_WORDS = frozenset("""
a about an and are as at be been but by can could did do does for from had has have how i if in
into is it its me my no not of on or our so than that the their them then there these they this
to was we were what when where which who why will with would you your
""".split())

def query_terms(query: str) -> list[str]:
    """Whitespace-separated words with their edge punctuation kept; stop words dropped if possible."""
    words = [w for w in query.split() if w]
    kept = [w for w in words if w.strip("?!.,;:'\"").lower() not in STOP_WORDS]
    return kept or words


def fts_query(query: str) -> str:
    """Each term as an FTS5 string (inner quotes doubled), joined with OR."""
    terms = []
    for term in query_terms(query):
        stripped = term.strip("?!.,;:'\"")
        if stripped:
            terms.append('"' + stripped.replace('"', '""') + '"')
    return " OR ".join(terms)


def normalise_bm25(results: list[tuple[int, float]]) -> list[tuple[int, float]]:
    """``(num, -bm25)`` rows scaled so the best is 1.0."""
    if not results:
        return []
    best = max(score for _, score in results)
    if best <= 0:
        return [(num, 1.0) for num, _ in results]
    return [(num, max(score, 0.0) / best) for num, score in results]


def hybrid_merge(vector_results: list[tuple[int, float]], keyword_results: list[tuple[int, float]],
                 vector_weight: float, keyword_weight: float,
                 limit: int) -> list[tuple[int, float]]:
    """Merge ``(num, cosine)`` and ``(num, -bm25)`` lists into the top ``limit`` by final score."""
    scores: dict[int, float] = {}
    for num, cosine in vector_results:
        scores[num] = vector_weight * max(0.0, min(1.0, cosine))
    for num, keyword in normalise_bm25(keyword_results):
        scores[num] = scores.get(num, 0.0) + keyword_weight * keyword
    ranked = sorted(scores.items(), key=lambda item: item[1], reverse=True)[:limit]
    return [(num, round(score, 6)) for num, score in ranked]


def like_terms(query: str) -> list[str]:
    """Terms for the LIKE fallback: words of the query, ``%``, ``_`` and ``\\`` escaped."""
    words = [w for w in re.split(r"[\s\x00]+", query) if w] or [query]
    return ["%" + re.sub(r"([%_\\])", r"\\\1", w) + "%" for w in words]
