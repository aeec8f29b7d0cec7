"""Shared fixtures: the real embedding model (re-quantised once per test session into a temporary
state directory) and real SQLite files under tmp_path."""

from __future__ import annotations

from pathlib import Path

import pytest

from edge.config.model import MemoryConfig
from edge.memory.embedders import create_embedder
from edge.memory.sqlite import SqliteMemory
from edge.memory.wordpiece import DEFAULT_VOCAB, MAX_TOKENS


@pytest.fixture(scope="session")
def model_state_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("model-state")


@pytest.fixture(scope="session")
def embedder(model_state_dir):
    """The default onnx embedder, loaded once for the whole session."""
    onnx = create_embedder(MemoryConfig(), model_state_dir)
    onnx.load()
    return onnx


@pytest.fixture
async def memory(tmp_path, embedder):
    store = SqliteMemory(tmp_path / "brain.db", embedder)
    yield store
    await store.close()


@pytest.fixture
def reference_tokenizer():
    """The `tokenizers` BERT WordPiece over our vocabulary: the ids all-MiniLM-L6-v2 expects."""
    from tokenizers import BertWordPieceTokenizer

    tok = BertWordPieceTokenizer(str(DEFAULT_VOCAB), lowercase=True, clean_text=True,
                                 handle_chinese_chars=True, strip_accents=None)
    tok.enable_truncation(MAX_TOKENS)
    return tok
