"""Long-term memory: the Memory protocol, SQLite hybrid search
with local ONNX embeddings, Markdown and no-op backends, hygiene, snapshots and autosave.

Importing this package is light: numpy, onnxruntime and httpx load only when an embedder is used.

The face is lazy (PEP 562): the names in ``__all__`` load from their modules when first used, so
importing any module of the package (which runs this file first) loads none of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from edge.core.faces import lazy_face

if TYPE_CHECKING:
    from edge.memory.base import (
        Category,
        EmbeddingError,
        EmbeddingProvider,
        Memory,
        MemoryEntry,
        MemoryFailure,
        NothingToReindex,
        StaleEmbeddings,
    )
    from edge.memory.conversation import autosave_user_message
    from edge.memory.factory import build_memory, database_path, snapshot_path
    from edge.memory.hygiene import hygiene_loop, run_hygiene

__all__ = ["Category", "EmbeddingError", "EmbeddingProvider", "Memory", "MemoryEntry",
           "MemoryFailure", "NothingToReindex", "StaleEmbeddings", "autosave_user_message",
           "build_memory", "database_path", "hygiene_loop", "run_hygiene", "snapshot_path"]

_HOMES = {
    "base": ("Category", "EmbeddingError", "EmbeddingProvider", "Memory", "MemoryEntry",
             "MemoryFailure", "NothingToReindex", "StaleEmbeddings"),
    "conversation": ("autosave_user_message",),
    "factory": ("build_memory", "database_path", "snapshot_path"),
    "hygiene": ("hygiene_loop", "run_hygiene"),
}
"""Each module, and the names of ``__all__`` it holds."""

__getattr__ = lazy_face(__name__, _HOMES)
