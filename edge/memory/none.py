"""NoneMemory: memory switched off (``[memory] backend = "none"``), a no-op behind the protocol."""

from __future__ import annotations

import builtins
from collections.abc import Collection
from typing import Any

from edge.memory.base import Category, Memory, MemoryEntry


class NoneMemory(Memory):
    """Memory switched off: stores nothing, recalls nothing, has no vectors to reindex."""

    name = "none"

    async def store(self, key: str, content: str, category: Category,
                    session_id: str | None = None) -> None:
        return None

    async def recall(self, query: str, limit: int = 5, session_id: str | None = None, *,
                     scopes: Collection[str | None] | None = None) -> list[MemoryEntry]:
        return []

    async def get(self, key: str) -> MemoryEntry | None:
        return None

    async def list(self, category: Category | None = None,
                   session_id: str | None = None) -> builtins.list[MemoryEntry]:
        return []

    async def forget(self, key: str) -> bool:
        return False

    async def count(self) -> int:
        return 0

    async def health_check(self) -> bool:
        return True

    async def close(self) -> None:
        return None

    async def stats(self) -> dict[str, Any]:
        return {"backend": self.name, "count": 0, "by_category": {}, "embedder": "none",
                "model": "none"}
