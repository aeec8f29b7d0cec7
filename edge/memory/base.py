"""The Memory and EmbeddingProvider protocols and their types.

Both Protocols are the whole contract: backends and embedders subclass them and inherit the
defaults of the optional members. ``score`` is filled only by ``recall``; ``get`` and ``list``
are exact look-ups.

>>> Category.parse("core"), Category.parse("project-x").value
(<Category.CORE: 'core'>, 'project-x')
"""

from __future__ import annotations

import builtins
from abc import abstractmethod
from collections.abc import Callable, Collection
from dataclasses import asdict, dataclass
from typing import Any, ClassVar, Protocol, runtime_checkable

from edge.core.exc import EdgeError
from edge.memory.calibration import RelevanceCalibration, calibration_for


class MemoryFailure(EdgeError):
    """The memory store failed (locked or corrupt file, bad query); the message says what to do."""


class EmbeddingError(MemoryFailure):
    """The embedder cannot run (model missing, wrong digest, server down)."""


class NothingToReindex(MemoryFailure):
    """The backend (or its configuration) keeps no vectors, so there is nothing to re-embed."""

    exit_code = 2


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


Progress = Callable[[int, int], None]
"""``progress(done, total)``, called after each batch of a reindex."""


@runtime_checkable
class EmbeddingProvider(Protocol):
    """Text in, vectors out. Embedders subclass this Protocol, so the optional members come with
    a default: nothing to load (``loaded`` is True, ``load`` does nothing), no second instance
    for bulk work (``bulk`` is the embedder itself), nothing to close, and the relevance
    calibration measured for its model (``edge.memory.calibration``; none measured: relevance is
    the cosine). An embedder with a model to load (onnx) or a connection to close (http)
    overrides them.

    >>> class Zeros(EmbeddingProvider):
    ...     name = model_id = "zeros"
    ...     dimensions = 2
    ...     async def embed(self, texts): return [[0.0, 0.0] for _ in texts]
    >>> import asyncio; zeros = Zeros()
    >>> zeros.loaded, zeros.bulk() is zeros, asyncio.run(zeros.embed_one("x"))
    (True, True, [0.0, 0.0])
    >>> zeros.calibration.relevance(0.25)
    0.25
    """

    name: str

    @property
    @abstractmethod
    def model_id(self) -> str:
        """Identifies the vector space; vectors with another model id are not comparable."""
        ...

    @property
    @abstractmethod
    def dimensions(self) -> int: ...

    @abstractmethod
    async def embed(self, texts: list[str]) -> list[list[float]]:
        """One L2-normalised vector per text."""
        ...

    async def embed_one(self, text: str) -> list[float]:
        return (await self.embed([text]))[0]

    @property
    def known_model_id(self) -> str | None:
        """``model_id`` when it is known without preparing the model (finding, hashing or
        re-quantising its file), else None: for reports such as ``edge-cli memory stats``."""
        return self.model_id

    @property
    def loaded(self) -> bool:
        """Whether ``embed`` can answer without first loading a model (slow on a Pi)."""
        return True

    def load(self) -> None:
        """Load the model now; blocking, so callers run it in a thread. Idempotent."""
        return None

    @property
    def calibration(self) -> RelevanceCalibration:
        """How this model's cosines map to relevance: looked up by ``model_id`` among the
        measured models, else relevance is the cosine."""
        return calibration_for(self.model_id)

    def bulk(self) -> EmbeddingProvider:
        """An embedder for re-embedding many texts (onnx: a second instance with more threads)."""
        return self

    async def close(self) -> None:
        return None


@runtime_checkable
class Memory(Protocol):
    """A long-term memory backend. Backends subclass this Protocol: the eight methods without a
    body are required; the rest are optional capabilities with a default that does without
    (nothing expires, no vectors, no model to load), so callers use them unconditionally.

    >>> from edge.memory.none import NoneMemory
    >>> import asyncio; off = NoneMemory()
    >>> off.model_ready, off.model_to_preload(), asyncio.run(off.delete_older_than(Category.CORE, ""))
    (False, None, 0)
    >>> asyncio.run(off.reindex())  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    edge.memory.base.NothingToReindex: the none backend keeps no vectors to reindex; ...
    """

    name: str
    wait_for_model: bool = True
    """False (the agent, whose model loads in the background or not at all in a piped run):
    until the embedding model is loaded, recall uses keywords and stores are embedded later, by
    ``reindex(only_stale=True)``, so no reply waits seconds for a model load."""

    @abstractmethod
    async def store(self, key: str, content: str, category: Category,
                    session_id: str | None = None) -> None:
        """Insert, or replace the entry with the same key."""
        ...

    @abstractmethod
    async def recall(self, query: str, limit: int = 5, session_id: str | None = None, *,
                     scopes: Collection[str | None] | None = None) -> list[MemoryEntry]:
        """The entries most relevant to ``query``, best first, with ``score`` set. ``scopes``:
        only entries whose ``session_id`` is one of them (``None`` in it: unscoped, shared ones);
        this is how a person's recall never sees another person's memories."""
        ...

    @abstractmethod
    async def get(self, key: str) -> MemoryEntry | None: ...

    @abstractmethod
    async def list(self, category: Category | None = None,
                   session_id: str | None = None) -> builtins.list[MemoryEntry]: ...

    @abstractmethod
    async def forget(self, key: str) -> bool:
        """Delete by key; False when nothing was deleted (or the backend is append-only)."""
        ...

    @abstractmethod
    async def count(self) -> int: ...

    @abstractmethod
    async def health_check(self) -> bool: ...

    @abstractmethod
    async def close(self) -> None: ...

    # -- optional capabilities ---------------------------------------------------------------

    async def store_many(self, items: builtins.list[tuple[str, str, Category, str | None]]) -> None:
        """Store several ``(key, content, category, session_id)`` entries (snapshot hydration);
        a backend with transactions does it in one."""
        for key, content, category, session_id in items:
            await self.store(key, content, category, session_id)

    async def delete_older_than(self, category: Category, cutoff_iso: str) -> int:
        """Delete entries of ``category`` last stored before ``cutoff_iso``; returns how many.
        Default: none (an append-only or empty backend keeps everything)."""
        return 0

    @property
    def model_ready(self) -> bool:
        """Whether stores and recalls compute vectors now (so hygiene re-embeds stale ones)."""
        return False

    def model_to_preload(self) -> EmbeddingProvider | None:
        """The embedder whose model is worth loading ahead of the first recall (a local model
        not loaded yet); None when there is nothing to load."""
        return None

    async def reindex(self, progress: Progress | None = None, only_stale: bool = False) -> int:
        """Re-embed every entry (or only those without a current vector); returns how many."""
        raise NothingToReindex(f"the {self.name} backend keeps no vectors to reindex; use "
                               "[memory] backend = \"sqlite\" with an embedder for semantic recall")

    async def stats(self) -> dict[str, Any]:
        """What ``edge-cli memory stats`` prints; at least ``backend`` and ``count``."""
        return {"backend": self.name, "count": await self.count()}
