"""``build_memory``: the backend chosen by ``[memory] backend``, with cold-start recovery.

When ``brain.db`` is missing but ``MEMORY_SNAPSHOT.md`` exists, the fresh database is hydrated
from the snapshot before it is handed out.

Layout under the state directory: ``memory/brain.db`` (sqlite), ``MEMORY.md`` and
``memory/YYYY-MM-DD.md`` (markdown), ``MEMORY_SNAPSHOT.md``, ``models/`` (re-quantised model).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from edge.memory.base import Memory
from edge.memory.snapshot import SNAPSHOT_NAME

if TYPE_CHECKING:
    from edge.config.model import MemoryConfig

log = logging.getLogger(__name__)

DATABASE = Path("memory") / "brain.db"


def database_path(state_dir: Path) -> Path:
    return Path(state_dir) / DATABASE


def snapshot_path(state_dir: Path) -> Path:
    return Path(state_dir) / SNAPSHOT_NAME


async def build_memory(config: MemoryConfig, state_dir: Path) -> Memory:
    """``config`` is the MemoryConfig. Nothing heavy is imported for ``none`` or ``markdown``,
    and the embedding model itself loads only on the first store or recall."""
    state_dir = Path(state_dir)
    if config.backend == "none":
        from edge.memory.none import NoneMemory

        return NoneMemory()
    if config.backend == "markdown":
        from edge.memory.markdown import MarkdownMemory

        return MarkdownMemory(state_dir)

    from edge.memory.embedders import create_embedder
    from edge.memory.snapshot import hydrate_from_snapshot
    from edge.memory.sqlite import SqliteMemory

    path = database_path(state_dir)
    fresh = not path.exists()
    memory = SqliteMemory(path, create_embedder(config, state_dir),
                          vector_weight=config.vector_weight, keyword_weight=config.keyword_weight,
                          min_relevance=config.min_relevance, cache_size=config.embedding_cache_size,
                          open_timeout=config.open_timeout_seconds)
    snapshot = snapshot_path(state_dir)
    if fresh and snapshot.is_file():
        restored = await hydrate_from_snapshot(memory, snapshot)
        log.warning("memory_hydrated_from_snapshot entries=%d snapshot=%s", restored, snapshot)
    return memory
