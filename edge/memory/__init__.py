"""Long-term memory: the Memory protocol, SQLite hybrid search
with local ONNX embeddings, Markdown and no-op backends, hygiene, snapshots and autosave.

Importing this package is light: numpy, onnxruntime and httpx load only when an embedder is used.
"""

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
           "MemoryFailure", "NothingToReindex", "StaleEmbeddings", "autosave_user_message", "build_memory",
           "database_path", "hygiene_loop", "run_hygiene", "snapshot_path"]
