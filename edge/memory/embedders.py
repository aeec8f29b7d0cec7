"""Choosing an EmbeddingProvider from ``[memory] embedder``, and the no-op one.

``onnx`` is the default and runs offline; where onnxruntime or numpy cannot be installed (32-bit
Pi OS) it degrades to ``none``, i.e. keyword recall, and says so once in the log.
"""

from __future__ import annotations

import importlib.util
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from edge.memory.base import EmbeddingProvider

if TYPE_CHECKING:
    from edge.config.model import MemoryConfig

log = logging.getLogger(__name__)

MODEL_CACHE_DIR = "models"


class NoopEmbedding(EmbeddingProvider):
    """``dimensions == 0``: the SQLite backend recalls by keywords only."""

    name = "none"
    model_id = "none"
    dimensions = 0

    async def embed(self, texts: list[str]) -> list[list[float]]:
        return [[] for _ in texts]


def onnx_available() -> bool:
    return all(importlib.util.find_spec(name) is not None for name in ("onnxruntime", "numpy"))


def create_embedder(config: MemoryConfig, state_dir: Path) -> EmbeddingProvider:
    """``config`` is a MemoryConfig; nothing heavy is imported or loaded here."""
    choice = config.embedder
    if choice == "none":
        return NoopEmbedding()
    if choice == "onnx":
        if not onnx_available():
            log.warning("memory_embedder_unavailable embedder=onnx reason=\"onnxruntime or numpy "
                        "not installed (no wheels on 32-bit Pi OS)\" fallback=keyword-recall")
            return NoopEmbedding()
        from edge.memory.model_file import expected_model_id, resolve_model
        from edge.memory.onnx_embedder import OnnxEmbedding

        cache_dir = state_dir / MODEL_CACHE_DIR
        return OnnxEmbedding(lambda: resolve_model(config.model_path, config.model_sha256,
                                                   config.quantize, cache_dir),
                             expected_model_id=expected_model_id(config.model_path,
                                                                 config.model_sha256, config.quantize))
    from edge.memory.http_embedder import OPENAI_BASE_URL, HttpEmbedding

    base_url = OPENAI_BASE_URL if choice == "openai" else choice[len("custom:"):]
    api_key = config.api_key.get_secret_value() if config.api_key else None
    return HttpEmbedding(base_url, config.embedding_model, api_key,
                         dimensions=config.embedding_dimensions)
