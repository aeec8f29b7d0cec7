"""Query building and score merging for hybrid recall.

Every query word is quoted for FTS5 and the words are OR-ed; common English stop words are
dropped first unless nothing else is left (a 10x saving at 100k rows, shared/notes/embeddings.md).
BM25 scores (negated, larger is better) become keyword relevance, the share of a full match
(the score of a memory holding every query term, ``keyword_relevance``), squared in the merge as
a coordination factor (classic Lucene scoring had one): a memory holding one word of a five-word
question gets 1/25 of the keyword weight, not the whole of it because it was the best keyword hit.
The merge is ``vector_weight * relevance(cosine) + keyword_weight * min(1, keyword) ** 2``, where
the embedder's calibration (``calibration.py``) maps its cosine to relevance.

>>> fts_query('what is the "pump" schedule?')
'"pump" OR "schedule"'
>>> hybrid_merge([(1, 0.9)], [(2, 1.0), (1, 0.5)], 0.7, 0.3, 5)
[(1, 0.705), (2, 0.3)]
"""

from __future__ import annotations

import math
import re

from edge.memory.calibration import UNCALIBRATED, RelevanceCalibration

STOP_WORDS = frozenset("""
a about above after again against all also am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further had
has have having he her here hers herself him himself his how i if in into is it its itself just
me more most my myself no nor not now of off on once only or other our ours ourselves out over
own same she should so some such than that the their theirs them themselves then there these
they this those through to too under until up very was we were what when where which while who
whom why will with would you your yours yourself yourselves
""".split())  # noqa: SIM905 - a word list reads better as text than as 170 literals

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


def full_match_bm25(terms: list[str], doc_counts: dict[str, int], total: int) -> float:
    """The BM25 score FTS5 gives a memory of average length holding each term once: the sum of
    the terms' IDF (a term no memory holds has the highest).

    >>> round(full_match_bm25(["pump", "relay"], {"pump": 1}, 10), 2)
    4.89
    """
    total = max(total, *(doc_counts.get(t.lower(), 0) for t in terms), 0)
    return sum(max(math.log((total - n + 0.5) / (n + 0.5)), 1e-6)
               for n in (doc_counts.get(t.lower(), 0) for t in terms))


def keyword_relevance(results: list[tuple[int, float]], full: float | None) -> list[tuple[int, float]]:
    """``(num, -bm25)`` rows as a share of ``full``, the score of a full match (above 1 for a
    short memory repeating the terms); without it (a one-term query), scaled so the best is 1.0.

    >>> keyword_relevance([(7, 2.0)], 8.0), keyword_relevance([(7, 2.0)], None)
    ([(7, 0.25)], [(7, 1.0)])
    """
    if not full:
        return normalise_bm25(results)
    return [(num, max(score, 0.0) / full) for num, score in results]


def normalise_bm25(results: list[tuple[int, float]]) -> list[tuple[int, float]]:
    """``(num, -bm25)`` rows scaled so the best is 1.0."""
    if not results:
        return []
    best = max(score for _, score in results)
    if best <= 0:
        return [(num, 1.0) for num, _ in results]
    return [(num, max(score, 0.0) / best) for num, score in results]


def hybrid_merge(vector_results: list[tuple[int, float]], keyword_results: list[tuple[int, float]],
                 vector_weight: float, keyword_weight: float, limit: int,
                 calibration: RelevanceCalibration = UNCALIBRATED) -> list[tuple[int, float]]:
    """Merge ``(num, cosine)`` and ``(num, keyword relevance)`` lists into the top ``limit``
    by final score."""
    relevance = calibration.relevance
    scores: dict[int, float] = {}
    for num, cosine in vector_results:
        scores[num] = vector_weight * relevance(cosine)
    for num, keyword in keyword_results:
        scores[num] = scores.get(num, 0.0) + keyword_weight * min(1.0, keyword) ** 2
    ranked = sorted(scores.items(), key=lambda item: item[1], reverse=True)[:limit]
    return [(num, round(score, 6)) for num, score in ranked]


def like_terms(query: str) -> list[str]:
    """Terms for the LIKE fallback: words of the query, ``%``, ``_`` and ``\\`` escaped."""
    words = [w for w in re.split(r"[\s\x00]+", query) if w] or [query]
    return ["%" + re.sub(r"([%_\\])", r"\\\1", w) + "%" for w in words]
