"""Where the embedder cannot run (32-bit Pi OS: no numpy or onnxruntime wheels), memory recalls
by keywords, the log says why once, and ``doctor`` says why and how to get recall by meaning."""

from __future__ import annotations

import importlib.util
import logging
import platform
from pathlib import Path

import pytest

from edge.config.loader import LoadedConfig
from edge.config.model import Config, MemoryConfig
from edge.doctor.memory import check_memory
from edge.memory.embedders import NoopEmbedding, create_embedder, unavailable_reason

REAL_FIND_SPEC = importlib.util.find_spec


@pytest.fixture
def thirty_two_bit(monkeypatch: pytest.MonkeyPatch) -> None:
    """What a venv on 32-bit Pi OS holds: no numpy, no onnxruntime."""
    monkeypatch.setattr(platform, "machine", lambda: "armv7l")
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *args: None if name in (
        "numpy", "onnxruntime") else REAL_FIND_SPEC(name, *args))


def loaded(**memory: str) -> LoadedConfig:
    return LoadedConfig(Config(memory=MemoryConfig(**memory)), None)


def test_the_packaged_model_falls_back_to_keywords_and_says_why(
        thirty_two_bit: None, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        embedder = create_embedder(MemoryConfig(), tmp_path)
    assert isinstance(embedder, NoopEmbedding)
    assert "memory_embedder_unavailable embedder=onnx" in caplog.text
    assert "onnxruntime and numpy: PyPI has no armv7l wheels" in caplog.text


def test_an_http_embedder_needs_numpy_for_its_vector_index(thirty_two_bit: None, tmp_path: Path
                                                           ) -> None:
    assert unavailable_reason("custom:http://127.0.0.1:11434/v1") == (
        "numpy: PyPI has no armv7l wheels for it (32-bit Pi OS), so edge-agent does not install "
        "it there")
    assert isinstance(create_embedder(MemoryConfig(embedder="custom:http://127.0.0.1:1/v1"),
                                      tmp_path), NoopEmbedding)


def test_doctor_says_keyword_memory_why_and_how_to_get_vectors(thirty_two_bit: None) -> None:
    check = check_memory(loaded())
    assert check.status == "warn"
    assert check.detail.startswith("sqlite, keyword recall: embedder 'onnx' cannot run here")
    assert "64-bit Pi OS" in check.fix and "custom:http://HOST:11434/v1" in check.fix
    assert "python3-numpy" in check.fix


def test_keyword_recall_chosen_on_purpose_is_fine(thirty_two_bit: None) -> None:
    assert check_memory(loaded(embedder="none")).status == "ok"
    assert check_memory(loaded(backend="markdown")).detail == "markdown backend (keyword recall)"


def test_on_this_machine_the_packaged_model_runs() -> None:
    check = check_memory(loaded())
    assert (check.status, check.detail) == ("ok", "sqlite, recall by meaning and keywords "
                                                  "(embedder 'onnx')")
