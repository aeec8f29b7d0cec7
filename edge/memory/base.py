"""The Memory and EmbeddingProvider protocols and their types (seed 002_9a1873f4f488f98f.txt).

Memory has seven required methods and no defaults, because every backend searches differently.
``score`` is filled only by ``recall``; ``get`` and ``list`` are exact look-ups.

>>> Category.parse("core"), Category.parse("project-x").value
(<Category.CORE: 'core'>, 'project-x')
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, ClassVar, Protocol, runtime_checkable

from edge.exc import EdgeError


class MemoryFailure(EdgeError):
    """The memory store failed (locked or corrupt file, bad query); the message says what to do."""


class EmbeddingError(MemoryFailure):
    """The embedder cannot run (model missing, wrong digest, server down)."""


class StaleEmbeddings(MemoryFailure):
    """Stored vectors come from another model than the configured one."""


@dataclass(frozen=True)
class Category:
    """Core, Daily, Conversation, or any custom name (``Category("project-x")``)."""

    value: str

    CORE: ClassVar[Category]
    DAILY: ClassVar[Category]
    CONVERSATION: ClassVar[Category]

    @classmethod
    def parse(cls, text: str) -> Category:
        name = text.strip().lower()
        if not name:
            raise ValueError("a memory category cannot be empty")
        return BUILTIN_CATEGORIES.get(name) or cls(name)

    @property
    def custom(self) -> bool:
        return self.value not in BUILTIN_CATEGORIES

    def __repr__(self) -> str:
        return f"<Category.{self.value.upper()}: {self.value!r}>" if not self.custom else \
            f"Category({self.value!r})"

    def __str__(self) -> str:
        return self.value


Category.CORE = Category("core")
Category.DAILY = Category("daily")
Category.CONVERSATION = Category("conversation")
BUILTIN_CATEGORIES = {c.value: c for c in (Category.CORE, Category.DAILY, Category.CONVERSATION)}


@dataclass
class MemoryEntry:
    id: str
    key: str
    content: str
    category: Category
    timestamp: str
    """ISO 8601 UTC time of the last store."""
    session_id: str | None = None
    score: float | None = None

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["category"] = self.category.value
        return data


@runtime_checkable
class Memory(Protocol):
    name: str

    async def store(self, key: str, content: str, category: Category,
                    session_id: str | None = None) -> None:
        """Insert, or replace the entry with the same key."""

    async def recall(self, query: str, limit: int = 5,
                     session_id: str | None = None) -> list[MemoryEntry]:
        """The entries most relevant to ``query``, best first, with ``score`` set."""

    async def get(self, key: str) -> MemoryEntry | None: ...

    async def list(self, category: Category | None = None,
                   session_id: str | None = None) -> list[MemoryEntry]: ...

    async def forget(self, key: str) -> bool:
        """Delete by key; False when nothing was deleted (or the backend is append-only)."""

    async def count(self) -> int: ...

    async def health_check(self) -> bool: ...

    async def close(self) -> None: ...


@runtime_checkable
class EmbeddingProvider(Protocol):
    name: str
    model_id: str
    """Identifies the vector space; vectors with another model id are not comparable."""

    @property
    def dimensions(self) -> int: ...

    async def embed(self, texts: list[str]) -> list[list[float]]:
        """One L2-normalised vector per text."""

    async def embed_one(self, text: str) -> list[float]: ...
