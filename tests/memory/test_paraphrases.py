"""Recall by meaning (issue 16): with the default configuration and the packaged model, a question
in other words finds the memory it is about first, and a question about nothing stored finds
nothing. The set is tests/memory/paraphrases.toml; bench/bench_memory.py reports the same figures
next to the uncalibrated baseline."""

import re
import tomllib
from pathlib import Path

import pytest

from edge.config.model import MemoryConfig
from edge.memory.base import Category
from edge.memory.ranking import STOP_WORDS
from edge.memory.sqlite import SqliteMemory

SET_FILES = ["paraphrases.toml", "paraphrases_holdout.toml"]
"""The set the relevance calibration was fitted on, and a held-out set written independently of it
(same format and rules; only the structural tests below run on it)."""


def load_set(name: str) -> tuple[list[tuple[str, str]], list[str], list[str]]:
    """A set's (memory, query) pairs, other memories and distractors."""
    data = tomllib.loads((Path(__file__).parent / name).read_text())
    return ([(pair["memory"], pair["query"]) for pair in data["pair"]], data["other_memories"],
            data["distractors"])


PAIRS, OTHER_MEMORIES, DISTRACTORS = load_set("paraphrases.toml")
each_set = pytest.mark.parametrize("set_file", SET_FILES)

FUNCTION_WORDS = STOP_WORDS | set("must shall should can could would will may might get got let "  # noqa: SIM905
                                  "im don t s ll ve re d m".split())  # (a word list reads better as text)
"""Recall's stop words, modal verbs and the pieces of contractions ("don't", "I'm")."""


def content_words(text: str) -> set[str]:
    """Lower-case words and numbers, function words dropped, crudely stemmed ("plugs": "plug").

    >>> sorted(content_words("The plugs aren't switched on at 7"))
    ['7', 'aren', 'plug', 'switch']
    """
    def stem(word: str) -> str:
        for suffix in ("ing", "ed", "es", "s"):
            if word.endswith(suffix) and len(word) - len(suffix) >= 3:
                return word[:-len(suffix)]
        return word

    return {stem(w) for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in FUNCTION_WORDS}


@each_set
def test_the_set_has_at_least_thirty_pairs_and_thirty_distractors(set_file):
    pairs, _, distractors = load_set(set_file)
    assert len(pairs) >= 30 and len(distractors) >= 30
    assert len({query for _, query in pairs}) == len(pairs)


@each_set
def test_no_query_shares_a_content_word_with_its_memory(set_file):
    pairs, _, _ = load_set(set_file)
    shared = {query: content_words(memory) & content_words(query) for memory, query in pairs}
    assert {query: words for query, words in shared.items() if words} == {}


@each_set
def test_no_distractor_shares_a_content_word_with_any_memory(set_file):
    pairs, other_memories, distractors = load_set(set_file)
    stored = set().union(*(content_words(m) for m in [m for m, _ in pairs] + other_memories))
    shared = {query: content_words(query) & stored for query in distractors}
    assert {query: words for query, words in shared.items() if words} == {}


@pytest.fixture
async def default_memory(tmp_path, embedder):
    """A real brain.db with every memory of the set, weighted and thresholded as by default."""
    config = MemoryConfig()
    memory = SqliteMemory(tmp_path / "brain.db", embedder, vector_weight=config.vector_weight,
                          keyword_weight=config.keyword_weight, min_relevance=config.min_relevance)
    await memory.store_many(
        [(f"pair-{i:02d}", memory_text, Category.CORE, None) for i, (memory_text, _) in enumerate(PAIRS)]
        + [(f"other-{i:02d}", text, Category.CORE, None) for i, text in enumerate(OTHER_MEMORIES)])
    yield memory
    await memory.close()


async def test_questions_in_other_words_find_their_memory_first(default_memory):
    limit = MemoryConfig().recall_limit
    misses = {}
    for i, (_, query) in enumerate(PAIRS):
        found = await default_memory.recall(query, limit)
        if not found or found[0].key != f"pair-{i:02d}":
            misses[query] = [(e.content, e.score) for e in found[:1]]
    recall_at_1 = 1 - len(misses) / len(PAIRS)
    assert recall_at_1 >= 0.90, misses


async def test_questions_about_nothing_stored_find_nothing(default_memory):
    limit = MemoryConfig().recall_limit
    returned = {}
    for query in DISTRACTORS:
        found = await default_memory.recall(query, limit)
        if found:
            returned[query] = [(e.content, e.score) for e in found]
    assert len(returned) / len(DISTRACTORS) < 0.10, returned


async def test_a_memory_found_by_meaning_alone_clears_the_agents_threshold(default_memory):
    from edge.agent.memory_context import MIN_RELEVANCE

    found = await default_memory.recall("Where can I find the wireless network key?")
    assert found[0].content == "The Wi-Fi password is taped under the router."
    assert found[0].score >= MIN_RELEVANCE
