"""The memory check: which backend and embedder the agent will use, and, where the configured
embedder cannot run (32-bit Pi OS has no numpy or onnxruntime), that memory recalls by keywords,
why, and how to get recall by meaning."""

from __future__ import annotations

from typing import TYPE_CHECKING

from edge.doctor import Check

if TYPE_CHECKING:
    from edge.config.loader import LoadedConfig


def check_memory(loaded: LoadedConfig | None) -> Check:
    """Nothing is loaded: whether numpy and onnxruntime are installed is all it asks."""
    from edge.memory.embedders import unavailable_reason, vectors_fix

    if loaded is None:
        return Check("memory", "skip", "the config does not load (see the config check)")
    memory = loaded.config.memory
    if memory.backend != "sqlite":
        return Check("memory", "ok", f"{memory.backend} backend (keyword recall)")
    if memory.embedder == "none":
        return Check("memory", "ok", "sqlite, keyword recall (embedder = \"none\")")
    reason = unavailable_reason(memory.embedder)
    if reason is not None:
        return Check("memory", "warn", f"sqlite, keyword recall: embedder {memory.embedder!r} "
                     f"cannot run here ({reason}); the agent uses embedder none", vectors_fix())
    return Check("memory", "ok", f"sqlite, recall by meaning and keywords (embedder "
                 f"{memory.embedder!r})")
