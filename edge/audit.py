"""The audit trail: every outcome at the door to the pins, in ``<state>/audit.db``.

Each :class:`~edge.core.actuation.Actuation` the hardware reports (actuations, refusals,
auto-offs, the safe state, interlock trips, and calls of other MCP servers' tools that act on
the world, :mod:`edge.mcp.remote_tools`) is one row: when, which pin (or server and tool), what
was asked and what was read back, the outcome and its reason, who asked, through which door and
why. The
hardware awaits :meth:`AuditTrail.record` before it answers the caller, and the row is
committed (WAL, ``synchronous = FULL``) before that returns: a ``kill -9`` or a power cut loses
no actuation anybody was told of. Writes run on one thread off the event loop; records that
arrive while a commit is under way share the next one.

Rows older than ``[audit] keep_days`` go, and the oldest go while the rows take more than
``[audit] max_megabytes`` (checked at start and hourly, on the writer thread). The file is 0600.

>>> import asyncio, tempfile, pathlib, time
>>> from edge.core.actuation import Actuation
>>> path = pathlib.Path(tempfile.mkdtemp()) / "audit.db"
>>> trail = AuditTrail(path)
>>> asyncio.run(trail.record(Actuation(at=time.time(), board="gpio", pin="GPIO17", label="led",
...     action="write", asked=1.0, read_back=1.0, caller="cli:pi", door="cli")))
>>> [(a.label, a.caller) for a in read_history(path)]
[('led', 'cli:pi')]
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from edge.core.actuation import Actuation
from edge.core.sqlite_files import prepare_sqlite_file

log = logging.getLogger(__name__)

AUDIT_FILE = "audit.db"
PRUNE_EVERY_SECONDS = 3600.0
CACHE_KIB = -256
"""The page cache, in KiB (negative, as the pragma takes it): rows are appended and read back
by ``edge-cli history`` in another process, so SQLite's default of 2 MB only fills up (the soak
measured it full after about 30,000 rows) without speeding anything."""
DAY = 86400.0

SCHEMA = """
CREATE TABLE IF NOT EXISTS actuations (
    id INTEGER PRIMARY KEY,
    at REAL NOT NULL,
    board TEXT NOT NULL,
    pin TEXT NOT NULL,
    label TEXT NOT NULL,
    action TEXT NOT NULL,
    asked REAL,
    read_back REAL,
    outcome TEXT NOT NULL,
    reason TEXT NOT NULL,
    caller TEXT NOT NULL,
    door TEXT NOT NULL,
    why TEXT NOT NULL,
    detail TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS actuations_at ON actuations (at);
"""
COLUMNS = ("at", "board", "pin", "label", "action", "asked", "read_back", "outcome", "reason",
           "caller", "door", "why", "detail")
ADDED_COLUMNS = {"detail": "TEXT NOT NULL DEFAULT ''"}
"""Columns newer than the first trail: added to an older file when the agent opens it."""


def _columns(db: sqlite3.Connection) -> set[str]:
    return {row[1] for row in db.execute("PRAGMA table_info(actuations)")}


@dataclass(frozen=True)
class AuditLimits:
    keep_days: float = 365.0
    max_megabytes: float = 50.0


class AuditTrail:
    """An :class:`~edge.core.actuation.ActuationRecorder` that keeps every record in SQLite."""

    def __init__(self, path: Path, keep_days: float = 365.0, max_megabytes: float = 50.0):
        self.path = Path(path)
        self.limits = AuditLimits(keep_days, max_megabytes)
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="audit")
        self._db: sqlite3.Connection | None = None
        self._pending: list[tuple[Actuation, asyncio.Future[None]]] = []
        self._flusher: asyncio.Task[None] | None = None
        self._pruned_at = 0.0
        self._lock = threading.Lock()

    async def record(self, actuation: Actuation) -> None:
        """Return once ``actuation`` is committed (a cancelled caller does not stop the write)."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()
        self._pending.append((actuation, done))
        if self._flusher is None or self._flusher.done():
            self._flusher = loop.create_task(self._flush(), name="audit-flush")
        await asyncio.shield(done)

    async def _flush(self) -> None:
        loop = asyncio.get_running_loop()
        while self._pending:
            batch, self._pending = self._pending, []
            try:
                await loop.run_in_executor(self._executor, self._write, [a for a, _ in batch])
            except Exception as exc:
                log.error("audit_write_failed records=%d error=%r", len(batch), str(exc))
                for _, done in batch:
                    if not done.done():
                        done.set_exception(exc)
                continue
            for _, done in batch:
                if not done.done():
                    done.set_result(None)

    def _connect(self) -> sqlite3.Connection:
        if self._db is None:
            prepare_sqlite_file(self.path)
            db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = FULL")
            db.execute(f"PRAGMA cache_size = {CACHE_KIB}")
            db.execute("PRAGMA journal_size_limit = 1048576")
            db.executescript(SCHEMA)
            present = _columns(db)
            for column, kind in ADDED_COLUMNS.items():
                if column not in present:
                    db.execute(f"ALTER TABLE actuations ADD COLUMN {column} {kind}")
            self._db = db
        return self._db

    def _write(self, batch: list[Actuation]) -> None:
        with self._lock:
            db = self._connect()
            db.execute("BEGIN IMMEDIATE")
            try:
                db.executemany(
                    f"INSERT INTO actuations ({', '.join(COLUMNS)}) VALUES "
                    f"({', '.join('?' * len(COLUMNS))})",
                    [tuple(getattr(a, c) for c in COLUMNS) for a in batch])
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
            if time.time() - self._pruned_at > PRUNE_EVERY_SECONDS:
                self._prune(db, time.time())

    def prune(self, now: float | None = None) -> int:
        """Drop rows past ``keep_days`` and the oldest beyond ``max_megabytes``; how many went."""
        with self._lock:
            return self._prune(self._connect(), time.time() if now is None else now)

    def _prune(self, db: sqlite3.Connection, now: float) -> int:
        self._pruned_at = now
        gone = db.execute("DELETE FROM actuations WHERE at < ?",
                          (now - self.limits.keep_days * DAY,)).rowcount
        cap = self.limits.max_megabytes * 1024 * 1024
        while _used_bytes(db) > cap:
            count = db.execute("SELECT count(*) FROM actuations").fetchone()[0]
            if not count:
                break
            gone += db.execute(
                "DELETE FROM actuations WHERE id IN "
                "(SELECT id FROM actuations ORDER BY id LIMIT ?)", (max(1, count // 10),)).rowcount
        if gone:
            log.info("audit_pruned rows=%d", gone)
        return gone

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None
        self._executor.shutdown(wait=True)


def _used_bytes(db: sqlite3.Connection) -> int:
    pages = db.execute("PRAGMA page_count").fetchone()[0]
    free = db.execute("PRAGMA freelist_count").fetchone()[0]
    size = db.execute("PRAGMA page_size").fetchone()[0]
    return int((pages - free) * size)


def read_history(path: Path, pin: str | None = None, *, since: float | None = None,
                 who: str | None = None, limit: int = 50) -> list[Actuation]:
    """The newest ``limit`` records (oldest first) from an audit file, opened read-only:
    ``pin`` matches the pin, its label or ``board:pin``; ``who`` the caller, its channel
    (the door) or its sender; ``since`` is a Unix time. No file yet: no records."""
    if not Path(path).exists():
        return []
    clauses: list[str] = []
    args: list[object] = []
    if pin:
        clauses.append("(pin = ? OR label = ? OR board || ':' || pin = ? OR lower(pin) = lower(?))")
        args += [pin, pin, pin, pin]
    if since is not None:
        clauses.append("at >= ?")
        args.append(since)
    if who:
        clauses.append("(caller = ? OR door = ? OR substr(caller, length(door) + 2) = ?)")
        args += [who, who, who]
    where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:  # a file an older agent wrote has no newer columns (read-only: they read as empty)
        present = _columns(db)
        chosen = [c if c in present else f"'' AS {c}" for c in COLUMNS]
        rows = db.execute(f"SELECT {', '.join(chosen)} FROM actuations {where} "
                          "ORDER BY id DESC LIMIT ?", (*args, limit)).fetchall()
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):
            return []
        raise
    finally:
        db.close()
    return [Actuation(**dict(zip(COLUMNS, row, strict=True))) for row in reversed(rows)]


def describe(actuation: Actuation) -> str:
    """One line of history: ``2026-05-01 07:00:02 pump: on (read back on) by telegram:42
    (telegram, message 17)``."""
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(actuation.at))
    what = actuation.receipt()
    if actuation.action not in ("write", "pwm", "servo", "call"):
        what = f"{what} [{actuation.action}]"
    said = (actuation.caller, actuation.caller.partition(":")[2])  # no need to say it twice
    why = f", {actuation.why}" if actuation.why and actuation.why not in said else ""
    return f"{when} {what} by {actuation.caller or 'agent'} ({actuation.door}{why})"


def history_text(records: list[Actuation], pin: str | None = None) -> str:
    """Records as lines, oldest first, or a sentence saying there are none."""
    if not records:
        return f"No actuations of {pin} are recorded." if pin else "No actuations are recorded."
    return "\n".join(describe(a) for a in records)
