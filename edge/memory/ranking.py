"""Query building and score merging for hybrid recall.

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
a about above after again against all also am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further had
has have having he her here hers herself him himself his how i if in into is it its itself just
me more most my myself no nor not now of off on once only or other our ours ourselves out over
own same she should so some such than that the their theirs them themselves then there these
they this those through to too under until up very was we were what when where which while who
whom why will with would you your yours yourself yourselves
""".split())

def query_terms(query: str) -> list[str]:
    """Whitespace-separated words with their edge punctuation kept; stop words dropped if possible."""
    words = [w for w in query.split() if w]
    kept = [w for w in words if w.strip("?!.,;:'\"").lower() not in STOP_WORDS]
    return kept or words


def fts_terms(query: str) -> list[str]:
    """The query's terms as FTS5 will see them, edge punctuation and duplicates removed."""
    terms = [term.strip("?!.,;:'\"") for term in query_terms(query)]
    return list(dict.fromkeys(t for t in terms if t))


def fts_query(query: str | list[str]) -> str:
    """Each term as an FTS5 string (inner quotes doubled), joined with OR."""
    terms = fts_terms(query) if isinstance(query, str) else query
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)


COMMON_TERMS_MIN_ROWS = 2000
"""Below this many memories every query term is kept: search is fast and shares are noisy."""


def drop_common_terms(terms: list[str], doc_counts: dict[str, int], total: int,
                      max_share: float = 0.3) -> list[str]:
    """Leave out terms found in more than ``max_share`` of all memories: their BM25 weight is
    near zero while scoring every row they match is what makes keyword search slow. The rarest
    term is always kept.

    >>> drop_common_terms(["pump", "water"], {"water": 900, "pump": 12}, 2000)
    ['pump']
    """
    if len(terms) < 2 or total < COMMON_TERMS_MIN_ROWS:
        return terms
    kept = [t for t in terms if doc_counts.get(t.lower(), 0) <= max_share * total]
    return kept or [min(terms, key=lambda t: doc_counts.get(t.lower(), 0))]


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
