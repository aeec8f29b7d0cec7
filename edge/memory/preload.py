"""Loading the embedding model (``[memory] preload``) in a thread that start-up does not wait for:
until it is loaded, recall uses keywords, and what was stored meanwhile is embedded once it is."""

from __future__ import annotations

import asyncio
import logging
import threading

from edge.memory.base import EmbeddingProvider, Memory

log = logging.getLogger(__name__)

JOIN_SECONDS = 120.0
"""How long the agent's exit waits for a load in progress (onnxruntime aborts the process if it
is torn down mid-load)."""


class ModelPreload:
    """One memory's model, loaded in the background (:meth:`start`), waited for at exit
    (:meth:`join`)."""

    def __init__(self, memory: Memory, embedder: EmbeddingProvider):
        self.memory, self.embedder = memory, embedder
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        loop = asyncio.get_running_loop()
        self._thread = threading.Thread(target=self._load, args=(loop,),
                                        name="embedding-preload", daemon=True)
        self._thread.start()

    def _load(self, loop: asyncio.AbstractEventLoop) -> None:
        try:
            self.embedder.load()
        except Exception as exc:  # recall falls back to keywords and says why
            log.error("embedding_preload_failed error=%s", exc)
            return
        if not loop.is_closed():
            asyncio.run_coroutine_threadsafe(self._embed_deferred(), loop)

    async def _embed_deferred(self) -> None:
        """Vectors for what was stored while the model was loading."""
        try:
            count = await self.memory.reindex(only_stale=True)
        except Exception as exc:  # hygiene tries again on its next round
            log.warning("memory_deferred_embedding_failed error=%s", exc)
            return
        if count:
            log.info("memory_deferred_embedded entries=%d", count)

    async def join(self) -> None:
        if self._thread is not None and self._thread.is_alive():
            log.info("waiting for the embedding model to finish loading before exit")
            await asyncio.to_thread(self._thread.join, JOIN_SECONDS)
