"""Background fsync for transcript appends.

An append is written on the event loop, like a log line (a small write to the page cache costs
less than a hop to a worker thread: with 50 senders, ~2,700 durable turns/s against ~1,500), and
acknowledged: from then it survives the process being killed. The slow part, fsync, runs in a
worker thread for every file written since the previous round, so a power cut can lose only the
turns of the last few milliseconds, never a file's earlier lines: the trade SQLite's
``synchronous = NORMAL`` makes for memory (transcripts are append-only
JSONL; the write lock around each append stays with the caller)."""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path

log = logging.getLogger(__name__)


def append_bytes(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def fsync_all(paths: list[Path]) -> None:
    for path in paths:
        try:
            fd = os.open(path, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        except OSError as exc:
            log.error("transcript_fsync_failed path=%s error=%s", path, exc)


class FsyncQueue:
    """Files written but not yet fsynced, synced in rounds by one background task."""

    def __init__(self) -> None:
        self._dirty: dict[Path, None] = {}
        self._syncer: asyncio.Task[None] | None = None

    def mark(self, path: Path) -> None:
        self._dirty[path] = None
        if self._syncer is None or self._syncer.done():
            self._syncer = asyncio.get_running_loop().create_task(self._sync())

    async def flushed(self) -> None:
        """Wait until every file marked so far is fsynced."""
        while self._syncer is not None and not self._syncer.done():
            await asyncio.shield(self._syncer)

    async def _sync(self) -> None:
        while self._dirty:
            paths = list(self._dirty)
            self._dirty.clear()
            await asyncio.to_thread(fsync_all, paths)
