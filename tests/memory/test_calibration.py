"""Relevance calibration: each embedder brings the calibration measured for its model, a model
nobody measured keeps relevance equal to the cosine, and the default weights and threshold keep a
memory found by meaning alone."""

from pathlib import Path

import pytest

from edge.config.model import MemoryConfig
from edge.memory.calibration import (
    BOUNDARY_RELEVANCE,
    MINILM,
    UNCALIBRATED,
    RelevanceCalibration,
    calibration_for,
)
from edge.memory.embedders import NoopEmbedding, create_embedder
from edge.memory.sqlite import SqliteMemory


def test_the_packaged_model_brings_its_measured_calibration(embedder):
    assert embedder.calibration is MINILM


@pytest.mark.parametrize("quantize", [True, False])
def test_the_calibration_holds_for_the_model_as_shipped_and_requantised(quantize):
    assert calibration_for(f"all-MiniLM-L6-v2-int8@8199be6f699a{'+q8u8' if quantize else ''}") \
        is MINILM


@pytest.mark.parametrize(("embedder", "model", "expected"), [
    ("custom:http://localhost:11434/v1", "all-minilm", MINILM),      # Ollama serving MiniLM
    ("custom:http://localhost:11434/v1", "all-minilm:latest", MINILM),
    ("custom:http://localhost:8080/v1", "sentence-transformers/all-MiniLM-L6-v2", MINILM),
    ("openai", "text-embedding-3-small", UNCALIBRATED),              # not measured here
    ("custom:http://localhost:11434/v1", "nomic-embed-text", UNCALIBRATED),
])
def test_remote_embedders_are_calibrated_by_the_model_they_name(tmp_path, embedder, model, expected):
    remote = create_embedder(MemoryConfig(embedder=embedder, embedding_model=model), tmp_path)
    assert remote.calibration is expected


def test_no_embedder_and_unmeasured_local_files_are_uncalibrated():
    assert NoopEmbedding().calibration is UNCALIBRATED
    assert calibration_for("my-own-model@0123456789ab") is UNCALIBRATED


def test_uncalibrated_relevance_is_the_cosine_itself():
    cosines = [-0.2, 0.0, 0.1, 0.33, 0.6, 0.75, 1.0]
    assert [UNCALIBRATED.relevance(c) for c in cosines] == [0.0, 0.0, 0.1, 0.33, 0.6, 0.75, 1.0]


def test_relevance_keeps_the_order_of_cosines_and_stays_between_zero_and_one():
    cosines = [i / 100 for i in range(-30, 101)]
    relevance = [MINILM.relevance(c) for c in cosines]
    assert relevance == sorted(relevance) and relevance[0] == 0.0 and relevance[-1] == 1.0
    assert MINILM.relevance(MINILM.noise) == 0.0
    assert MINILM.relevance(MINILM.boundary) == pytest.approx(BOUNDARY_RELEVANCE)


def test_with_the_defaults_a_memory_at_the_boundary_is_kept_and_one_just_under_it_is_not():
    config = MemoryConfig()
    at_boundary = config.vector_weight * MINILM.relevance(MINILM.boundary)
    below = config.vector_weight * MINILM.relevance(MINILM.boundary - 0.03)
    assert below < config.min_relevance <= at_boundary


def test_a_calibration_needs_its_anchors_in_order():
    with pytest.raises(ValueError, match="noise < boundary < 1"):
        RelevanceCalibration(noise=0.4, boundary=0.3)


async def test_a_memory_can_be_given_another_calibration(tmp_path: Path, embedder):
    from edge.memory.base import Category

    texts = {"cats": "I'm allergic to cats.", "koi": "The koi in the pond are fed each morning."}
    found = {}
    for name, calibration in (("embedder's", None), ("uncalibrated", UNCALIBRATED)):
        memory = SqliteMemory(tmp_path / f"{name}.db", embedder, calibration=calibration)
        await memory.store_many([(k, v, Category.CORE, None) for k, v in texts.items()])
        found[name] = [e.key for e in await memory.recall("Can I keep a kitten?")]
        await memory.close()
    assert found == {"embedder's": ["cats"], "uncalibrated": []}   # cosine 0.38
