"""Choosing an EmbeddingProvider from ``[memory] embedder``, and the no-op one.

``onnx`` is the default and runs offline; where onnxruntime or numpy cannot be installed (32-bit
Pi OS: PyPI has no armv7 wheels of either, so pyproject.toml leaves them out there) it degrades
to ``none``, i.e. keyword recall, and says so once in the log; ``edge-cli doctor`` says it too
(:func:`unavailable_reason`, :mod:`edge.doctor.memory`). An HTTP embedder needs numpy for the
vector index, so without numpy it degrades the same way.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from edge.core import wheels
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
    return not wheels.missing("onnxruntime", "numpy")


def unavailable_reason(embedder: str) -> str | None:
    """Why the configured embedder cannot compute vectors here (None: it can, or is ``none``).

    >>> unavailable_reason("none") is None
    True
    """
    if embedder == "none":
        return None
    return wheels.unavailable_reason(*(("onnxruntime", "numpy") if embedder == "onnx"
                                       else ("numpy",)))


def vectors_fix() -> str:
    """How to get vectors where :func:`unavailable_reason` says there are none."""
    if wheels.on_32_bit_arm():
        return ("memory recalls by keywords, which works; for recall by meaning run 64-bit Pi OS "
                "(the packaged model runs there), or use an HTTP embedder (embedder = "
                "\"custom:http://HOST:11434/v1\", e.g. Ollama on another machine) with Debian's "
                "numpy: sudo apt install python3-numpy in a venv that sees the system's packages "
                "(deploy/install.sh makes it so on 32-bit); embedder = \"none\" makes keyword "
                "recall the stated choice")
    return "reinstall edge-agent (pip install -e . in its venv) to get numpy and onnxruntime"


def create_embedder(config: MemoryConfig, state_dir: Path) -> EmbeddingProvider:
    """``config`` is a MemoryConfig; nothing heavy is imported or loaded here."""
    choice = config.embedder
    if choice == "none":
        return NoopEmbedding()
    reason = unavailable_reason(choice)
    if reason is not None:
        log.warning("memory_embedder_unavailable embedder=%s reason=\"%s\" fallback=keyword-recall",
                    choice, reason)
        return NoopEmbedding()
    if choice == "onnx":
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
