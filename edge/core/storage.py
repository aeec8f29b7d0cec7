"""The state directory's health: full, read-only or ok, as the stores that write there find it.

The audit trail, the sensor readings, memory and the sessions all write under the state
directory. When a write fails because the disk is full (``ENOSPC``, ``EDQUOT``, SQLite's
"database or disk is full") or the file system is read-only (``EROFS``, "attempt to write a
readonly database"), the store tells :class:`StorageHealth` and carries on without the write:
actuations and safety timers never wait on it. SQLite reports a write refused by the kernel as a
plain "disk I/O error", so the file system itself (``statvfs``) settles which it is.

The health is shown in the status and by ``edge-cli doctor``; the admins are told once when it
goes wrong and once when it recovers (``on_change``). The audit trail also counts the records it
could not keep (:meth:`StorageHealth.not_recorded`), so the status says how many are missing.

>>> import errno
>>> problem(OSError(errno.ENOSPC, "No space left on device"))
'full'
>>> problem(OSError(errno.EROFS, "Read-only file system"))
'read-only'
>>> problem(ValueError("not a disk")) is None
True
>>> health = StorageHealth()
>>> health.failed(OSError(errno.ENOSPC, "No space left on device"), "/var/lib/edge/audit.db")
'full'
>>> health.state, health.path
('full', '/var/lib/edge/audit.db')
>>> health.failed(OSError(errno.ENOSPC, "again"), "/var/lib/edge/audit.db")  # told once
'full'
>>> [text.split(" (")[0] for text in health.notices]
['The state directory is full']
"""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import sqlite3
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Literal

log = logging.getLogger(__name__)

StorageState = Literal["ok", "full", "read-only"]
FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})
SQLITE_FULL = ("database or disk is full", "disk quota")
SQLITE_READ_ONLY = ("readonly database", "read-only file system")
SQLITE_IO = ("disk i/o error", "unable to open database file")
LOW_BYTES = 64 * 1024
"""Free space below which a file system that made SQLite fail counts as full."""


def filesystem_state(path: str | Path) -> StorageState:
    """What the file system holding ``path`` (or its nearest existing parent) says of itself."""
    where = Path(path)
    while not where.exists() and where != where.parent:
        where = where.parent
    try:
        stats = os.statvfs(where)
    except OSError:
        return "ok"
    if stats.f_flag & os.ST_RDONLY:
        return "read-only"
    if stats.f_bavail * stats.f_frsize < LOW_BYTES:
        return "full"
    return "ok"


def problem(exc: BaseException, path: str | Path | None = None) -> StorageState | None:
    """``full`` or ``read-only`` when ``exc`` is a write the disk refused, else None."""
    if isinstance(exc, OSError):
        if exc.errno in FULL_ERRNOS:
            return "full"
        if exc.errno == errno.EROFS:
            return "read-only"
    if isinstance(exc, sqlite3.OperationalError | sqlite3.DatabaseError):
        text = str(exc).lower()
        if any(words in text for words in SQLITE_FULL):
            return "full"
        if any(words in text for words in SQLITE_READ_ONLY):
            return "read-only"
        if path is not None and any(words in text for words in SQLITE_IO):
            found = filesystem_state(path)
            return None if found == "ok" else found
    return None


def in_words(state: StorageState, path: str | Path | None = None) -> str:
    """What a person is told: ``the disk is full`` / ``the disk is read-only``."""
    where = f" ({path})" if path else ""
    return f"the disk is {'full' if state == 'full' else 'read-only'}{where}"


class StorageHealth:
    """Told of every write a store could not make and of writes that work again."""

    def __init__(self, on_change: Callable[[str], Awaitable[object]] | None = None):
        self.on_change = on_change
        """Tells the admins (the runtime's notifier); set once the channels run."""
        self.state: StorageState = "ok"
        self.since: float | None = None
        self.path: str | None = None
        self.audit_missing = 0
        self.audit_missing_since: float | None = None
        self.notices: list[str] = []
        """What the admins were told, newest last (the last few)."""
        self._tasks: set[asyncio.Task[object]] = set()

    def tell_to(self, send: Callable[[str], Awaitable[object]]) -> None:
        """Tell the admins through ``send`` from now on, and now, if the disk already refused."""
        self.on_change = send
        if self.state != "ok" and self.notices:
            self._tell(self.notices[-1])

    def failed(self, exc: BaseException, path: str | Path) -> StorageState | None:
        """Note a write refused by the disk; None (nothing noted) for any other error."""
        found = problem(exc, path)
        if found is None:
            return None
        if found != self.state:
            self.state, self.since, self.path = found, time.time(), str(path)
            log.error("storage_failed state=%s path=%s error=%r", found, path, str(exc))
            self._tell(f"The state directory is {found} ({path}), so what the agent keeps "
                       "(audit trail, readings, memory, conversations) is not being saved. "
                       "Pins and their safety timers keep working. Free space (or remount it "
                       "read-write); `edge-cli doctor` checks it.")
        return found

    def recovered(self, path: str | Path) -> None:
        """A write under the state directory worked: the disk takes writes again."""
        if self.state == "ok":
            return
        was, since = self.state, self.since
        self.state, self.since, self.path = "ok", None, None
        log.info("storage_recovered was=%s path=%s", was, path)
        missing = (f"; {self.audit_missing} audit records were not kept"
                   if self.audit_missing else "")
        self._tell(f"The state directory takes writes again (it was {was} since "
                   f"{_clock(since)}){missing}.")

    def not_recorded(self, count: int) -> None:
        """``count`` audit records that could not be written (kept in memory: a number)."""
        if not self.audit_missing:
            self.audit_missing_since = time.time()
        self.audit_missing += count

    def status(self) -> dict[str, Any]:
        return {"state": self.state, "since": _clock(self.since) if self.since else None,
                "path": self.path, "audit_missing": self.audit_missing,
                "audit_missing_since": (_clock(self.audit_missing_since)
                                        if self.audit_missing_since else None)}

    def _tell(self, text: str) -> None:
        self.notices = [*self.notices[-9:], text]
        if self.on_change is None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        task = loop.create_task(self._send(self.on_change, text), name="storage-notice")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    @staticmethod
    async def _send(send: Callable[[str], Awaitable[object]], text: str) -> object:
        try:
            return await send(text)
        except Exception as exc:
            log.error("storage_notice_failed error=%r", str(exc))
            return None


def _clock(moment: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(moment or 0))
