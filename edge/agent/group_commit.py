"""Group commit for transcript appends. The turns that arrive while one batch is on its way to
disk share the next trip to a worker thread: each is written under its session's lock file
(seed 001_db95ab9e711ffb30.txt; a lock held by another live process is retried every 50 ms up to
LOCK_TIMEOUT_SECONDS), acknowledged once written (it then survives the process being killed),
and the batch's files are fsynced right after, in the same trip. A power cut can lose only the
turns of the last few milliseconds, never a file's earlier lines: the trade SQLite's
``synchronous = NORMAL`` makes for memory. One worker-thread hop per batch instead of one per
turn keeps the event loop free: fifty busy senders no longer queue behind each other's fsyncs.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

log = logging.getLogger(__name__)

LOCK_TIMEOUT_SECONDS = 10.0
LOCK_RETRY_SECONDS = 0.05


class FileLock(Protocol):
    path: Path

    def try_acquire(self) -> bool: ...

    def release(self) -> None: ...


@dataclass
class _Append:
    lock: FileLock
    path: Path
    data: bytes
    done: asyncio.Future[None]
    deadline: float


def _write(item: _Append) -> bool:
    """Append under the lock; False when another process holds it."""
    if not item.lock.try_acquire():
        return False
    try:
        fd = os.open(item.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, item.data)
        finally:
            os.close(fd)
    finally:
        item.lock.release()
    return True


def _fsync(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        log.error("transcript_fsync_failed path=%s error=%s", path, exc)


def _commit(batch: list[_Append], written: Callable[[list[bool | BaseException]], None]) -> None:
    """Write every append, report the outcomes, then fsync each file written."""
    outcomes: list[bool | BaseException] = []
    for item in batch:
        try:
            outcomes.append(_write(item))
        except Exception as exc:  # reported to the one waiting caller, the batch goes on
            outcomes.append(exc)
    written(outcomes)
    for path in dict.fromkeys(item.path for item, ok in zip(batch, outcomes) if ok is True):
        _fsync(path)


class GroupCommit:
    """Batched appends: ``await append(...)`` returns once the bytes are written."""

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self._clock = clock
        self._pending: list[_Append] = []
        self._writer: asyncio.Task[None] | None = None

    async def append(self, lock: FileLock, path: Path, data: bytes) -> None:
        done = asyncio.get_running_loop().create_future()
        self._enqueue(_Append(lock, path, data, done, self._clock() + LOCK_TIMEOUT_SECONDS))
        await done  # a turn cancelled meanwhile still has its bytes written whole, never half

    async def flushed(self) -> None:
        """Wait until everything written so far is also fsynced."""
        if self._writer is not None:
            await asyncio.shield(self._writer)

    def _enqueue(self, item: _Append) -> None:
        self._pending.append(item)
        if self._writer is None or self._writer.done():
            self._writer = asyncio.get_running_loop().create_task(self._drain())

    async def _drain(self) -> None:
        loop = asyncio.get_running_loop()
        while self._pending:
            batch, self._pending = self._pending, []

            def written(outcomes: list[bool | BaseException], batch: list[_Append] = batch) -> None:
                loop.call_soon_threadsafe(self._settle_all, batch, outcomes)

            await asyncio.to_thread(_commit, batch, written)

    def _settle_all(self, batch: list[_Append], outcomes: list[bool | BaseException]) -> None:
        for item, outcome in zip(batch, outcomes, strict=True):
            self._settle(item, outcome)

    def _settle(self, item: _Append, outcome: bool | BaseException) -> None:
        if item.done.done():
            return
        if outcome is True:
            item.done.set_result(None)
        elif isinstance(outcome, BaseException):
            item.done.set_exception(outcome)
        elif self._clock() > item.deadline:
            item.done.set_exception(
                TimeoutError(f"session lock {item.lock.path} is held by another process"))
        else:
            asyncio.get_running_loop().call_later(LOCK_RETRY_SECONDS, self._enqueue, item)
