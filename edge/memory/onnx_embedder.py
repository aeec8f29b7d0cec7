"""Local sentence embeddings with onnxruntime: WordPiece ids in, mean-pooled, L2-normalised
384-dimensional vectors out. No network and no API key (issue 5; shared/notes/embeddings.md).

The model loads on first use (numpy and onnxruntime are imported then, not before), with one
intra-op thread and no memory arena for queries, as suits a Pi; ``bulk()`` gives a second thread
with spinning off for re-indexing. Batches of 32 for float32 models; a dynamically quantised model
embeds one text at a time so every text always gets the same vector. Inference runs in a worker
thread so the event loop stays free.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from collections.abc import Callable
from typing import Any

from edge.core import heap
from edge.memory.base import EmbeddingError, EmbeddingProvider
from edge.memory.model_file import ModelFile
from edge.memory.wordpiece import DEFAULT_VOCAB, WordPiece

log = logging.getLogger(__name__)

DIMENSIONS = 384
BATCH_SIZE = 32
TELEMETRY_OFF = {"ORT_DISABLE_TELEMETRY": "1"}
"""onnxruntime 1.29+ sends telemetry on Linux unless this is set before it loads: an uploader
thread, a device id and an SQLite event cache (three descriptors) under
``~/.cache/Microsoft/DeveloperTools``, and connections to Microsoft. Measured in the soak: one
thread and three descriptors more with it. Embeddings here are local and offline."""


def import_onnxruntime() -> Any:
    """``onnxruntime``, imported with its telemetry off (and off for the processes it starts)."""
    for name, value in TELEMETRY_OFF.items():
        os.environ.setdefault(name, value)
    import onnxruntime

    return onnxruntime


class OnnxEmbedding(EmbeddingProvider):
    """Loads its model on first use (or ``load``); ``bulk`` gives a second instance."""

    name = "onnx"

    def __init__(self, locate_model: Callable[[], ModelFile], *, threads: int = 1,
                 model_id: str | None = None, expected_model_id: str | None = None):
        self._locate_model = locate_model
        self._threads = threads
        self._model_id = model_id
        self._expected_model_id = expected_model_id
        """What ``model_id`` will be once the file checks out (from the configured digest)."""
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: WordPiece | None = None
        self._batch_size = BATCH_SIZE
        self.load_seconds: float | None = None

    @property
    def dimensions(self) -> int:
        return DIMENSIONS

    @property
    def model_id(self) -> str:
        """Resolving the id finds (and on first use re-quantises) the model file, not loads it."""
        if self._model_id is None:
            self._model_id = self._locate_model().model_id
        return self._model_id

    @property
    def known_model_id(self) -> str | None:
        """The id found so far, or the one the configured digest promises; never a file read."""
        return self._model_id or self._expected_model_id

    @property
    def loaded(self) -> bool:
        return self._session is not None

    def load(self) -> None:
        with self._lock:
            if self._session is not None:
                return
            started = time.perf_counter()
            heap.fix_mmap_threshold()
            tokenizer = WordPiece.from_vocab_file(DEFAULT_VOCAB)  # its scratch is freed below
            try:
                ort = import_onnxruntime()
            except ImportError:
                raise EmbeddingError("onnxruntime is not installed (there are no wheels for 32-bit "
                                     "Pi OS); set [memory] embedder = \"none\" for keyword recall "
                                     "or use a remote embedder (custom:<url>)") from None
            model = self._locate_model()
            self._model_id = model.model_id
            options = ort.SessionOptions()
            options.intra_op_num_threads = self._threads
            options.inter_op_num_threads = 1
            options.enable_cpu_mem_arena = False
            options.enable_mem_pattern = False
            if self._threads > 1:
                options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            options.log_severity_level = 3
            try:
                session = ort.InferenceSession(str(model.path), options,
                                               providers=["CPUExecutionProvider"])
            except Exception as exc:  # onnxruntime raises its own untyped errors
                raise EmbeddingError(f"cannot load embedding model {model.path}: {exc}") from exc
            finally:
                heap.return_free_memory()  # the file's bytes and the graph optimiser's scratch
            self._tokenizer = tokenizer
            self._batch_size = BATCH_SIZE if model.batchable else 1
            self._session = session
            self.load_seconds = time.perf_counter() - started
            log.info("embedding_model_loaded model=%s seconds=%.2f threads=%d",
                     model.model_id, self.load_seconds, self._threads)

    def bulk(self) -> OnnxEmbedding:
        """A second instance with two threads, spinning off, for re-indexing many texts."""
        return OnnxEmbedding(self._locate_model, threads=2, model_id=self._model_id,
                             expected_model_id=self._expected_model_id)

    def embed_sync(self, texts: list[str]) -> list[Any]:
        """Blocking: float32 numpy rows, one per text."""
        import numpy as np

        self.load()
        assert self._tokenizer is not None
        rows = []
        for start in range(0, len(texts), self._batch_size):
            batch = self._tokenizer.encode_batch(texts[start:start + self._batch_size])
            ids = np.asarray(batch.input_ids, dtype=np.int64)
            mask = np.asarray(batch.attention_mask, dtype=np.int64)
            hidden = self._session.run(None, {"input_ids": ids, "attention_mask": mask,
                                              "token_type_ids": np.zeros_like(ids)})[0]
            weights = mask[..., None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
            norms = np.linalg.norm(pooled, axis=1, keepdims=True)
            rows.extend(pooled / np.maximum(norms, 1e-12))
        return rows

    async def embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        rows = await asyncio.to_thread(self.embed_sync, texts)
        return [row.tolist() for row in rows]
