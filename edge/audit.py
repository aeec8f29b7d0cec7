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

A caller's repeated refusal (same pin, action, value, door and reason, within a minute of the
last) is one row with a ``count`` and its first and last time, so a flood of refusals is a few
rows. ``[audit] keep_days`` and ``[audit] max_megabytes`` hold after every group commit, refusals
going first and actuations, trips and safe states last (:mod:`edge.audit_space`). When the disk is
full or read-only, the write is given up (the pin has already acted), counted, and said
(:class:`~edge.core.storage.StorageHealth`); the trail writes again once the disk takes it. The
file is 0600.

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
import contextlib
import logging
import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from edge.audit_space import AuditSpace
from edge.core.actuation import Actuation
from edge.core.sqlite_files import prepare_sqlite_file
from edge.core.storage import StorageHealth

log = logging.getLogger(__name__)

AUDIT_FILE = "audit.db"
FOLD_SECONDS = 60.0
"""A refusal like the caller's last one, within this long of it, adds to its count."""
CALLERS_KEPT = 1024
"""Callers whose last record is remembered for folding (the oldest is forgotten first)."""
CACHE_KIB = -256
"""The page cache, in KiB (negative, as the pragma takes it): rows are appended and read back
by ``edge-cli history`` in another process, so SQLite's default of 2 MB only fills up (the soak
measured it full after about 30,000 rows) without speeding anything."""

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
    detail TEXT NOT NULL DEFAULT '',
    count INTEGER NOT NULL DEFAULT 1,
    first_at REAL
);
CREATE INDEX IF NOT EXISTS actuations_at ON actuations (at);
"""
COLUMNS = ("at", "board", "pin", "label", "action", "asked", "read_back", "outcome", "reason",
           "caller", "door", "why", "detail", "count", "first_at")
ADDED_COLUMNS = {"detail": "TEXT NOT NULL DEFAULT ''", "count": "INTEGER NOT NULL DEFAULT 1",
                 "first_at": "REAL"}
"""Columns newer than the first trail: added to an older file when the agent opens it."""
READ_AS = {"detail": "''", "count": "1", "first_at": "NULL"}
"""How a column an older file lacks reads (read-only: it cannot be added)."""
Fold = tuple[str, str, str, str, float | None, str]
"""What makes two refusals the same: door, board, pin, action, value, reason."""


def _columns(db: sqlite3.Connection) -> set[str]:
    return {row[1] for row in db.execute("PRAGMA table_info(actuations)")}


@dataclass(frozen=True)
class AuditLimits:
    keep_days: float = 365.0
    max_megabytes: float = 50.0


class AuditTrail:
    """An :class:`~edge.core.actuation.ActuationRecorder` that keeps every record in SQLite."""

    def __init__(self, path: Path, keep_days: float = 365.0, max_megabytes: float = 50.0,
                 health: StorageHealth | None = None):
        self.path = Path(path)
        self.limits = AuditLimits(keep_days, max_megabytes)
        self.space = AuditSpace(keep_days, max_megabytes)
        self.health = health or StorageHealth()
        """Where a write the disk refused is counted and said (the runtime's, when it runs)."""
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="audit")
        self._db: sqlite3.Connection | None = None
        self._pending: list[tuple[Actuation, asyncio.Future[None]]] = []
        self._flusher: asyncio.Task[None] | None = None
        self._lock = threading.Lock()
        self._last: OrderedDict[str, tuple[Fold | None, int, float]] = OrderedDict()
        """Each caller's last row: what it refused (None: it was no refusal), its id, when."""

    @property
    def busy(self) -> bool:
        """Whether a record is still on its way to the file."""
        return bool(self._pending) or (self._flusher is not None and not self._flusher.done())

    async def record(self, actuation: Actuation) -> None:
        """Return once ``actuation`` is committed (a cancelled caller does not stop the write),
        or once the disk has refused it (counted in :attr:`health`)."""
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
                refused = self.health.failed(exc, self.path)
                if refused is not None:
                    self.health.not_recorded(len(batch))
                    log.warning("audit_not_recorded records=%d storage=%s missing=%d", len(batch),
                                refused, self.health.audit_missing)
                else:
                    log.error("audit_write_failed records=%d error=%r", len(batch), str(exc))
                for _, done in batch:
                    if done.done():
                        continue
                    if refused is None:
                        done.set_exception(exc)
                    else:  # the pin acted: its caller is not told the record failed
                        done.set_result(None)
                continue
            self.health.recovered(self.path)
            for _, done in batch:
                if not done.done():
                    done.set_result(None)

    def _connect(self) -> sqlite3.Connection:
        if self._db is None:
            prepare_sqlite_file(self.path)
            db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            try:
                self.space.configure(db)
                db.execute("PRAGMA journal_mode = WAL")
                db.execute("PRAGMA synchronous = FULL")
                db.execute(f"PRAGMA cache_size = {CACHE_KIB}")
                db.executescript(SCHEMA)
                present = _columns(db)
                for column, kind in ADDED_COLUMNS.items():
                    if column not in present:
                        db.execute(f"ALTER TABLE actuations ADD COLUMN {column} {kind}")
                self.space.keep(db, aged=True)
            except BaseException:
                db.close()
                raise
            self._db = db
        return self._db

    def _write(self, batch: list[Actuation]) -> None:
        with self._lock:
            db = self._connect()
            db.execute("BEGIN IMMEDIATE")
            try:
                for actuation in batch:
                    self._add(db, actuation)
                db.execute("COMMIT")
            except BaseException:
                self._last.clear()  # the ids it named may not be there
                with contextlib.suppress(sqlite3.Error):
                    db.execute("ROLLBACK")
                raise
            self.space.keep(db)

    def _add(self, db: sqlite3.Connection, a: Actuation) -> None:
        """Insert ``a``, or count it into the caller's last row when it repeats that refusal."""
        fold: Fold | None = ((a.door, a.board, a.pin, a.action, a.asked, a.reason)
                             if a.outcome == "refused" else None)
        last = self._last.get(a.caller)
        repeated = (fold is not None and last is not None and last[0] == fold
                    and a.at - last[2] <= FOLD_SECONDS)
        if last is not None and repeated and db.execute(
                "UPDATE actuations SET count = count + ?, at = max(at, ?) WHERE id = ?",
                (a.count, a.at, last[1])).rowcount:
            self._remember(a.caller, fold, last[1], a.at)
            return
        values = [getattr(a, c) for c in COLUMNS]
        values[COLUMNS.index("first_at")] = a.first_at if a.first_at is not None else a.at
        row = db.execute(f"INSERT INTO actuations ({', '.join(COLUMNS)}) VALUES "
                         f"({', '.join('?' * len(COLUMNS))})", values).lastrowid
        self._remember(a.caller, fold, int(row or 0), a.at)

    def _remember(self, caller: str, fold: Fold | None, row: int, at: float) -> None:
        self._last[caller] = (fold, row, at)
        self._last.move_to_end(caller)
        while len(self._last) > CALLERS_KEPT:
            self._last.popitem(last=False)

    def prune(self, now: float | None = None) -> int:
        """Drop rows past ``keep_days`` and, beyond ``max_megabytes``, the least important
        (:mod:`edge.audit_space`); how many went."""
        with self._lock:
            return self.space.keep(self._connect(), now, aged=True)

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None
        self._executor.shutdown(wait=True)


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

    def newest(db: sqlite3.Connection) -> list[Any]:
        present = _columns(db)  # an older agent's file lacks newer columns: they read as empty
        chosen = [c if c in present else f"{READ_AS[c]} AS {c}" for c in COLUMNS]
        return db.execute(f"SELECT {', '.join(chosen)} FROM actuations {where} "
                          "ORDER BY id DESC LIMIT ?", (*args, limit)).fetchall()

    rows = _read_only(path, newest)
    return [Actuation(**dict(zip(COLUMNS, row, strict=True))) for row in reversed(rows)]


def _read_only(path: Path, query: Callable[[sqlite3.Connection], list[Any]]) -> list[Any]:
    """The rows ``query`` reads from an audit file opened read-only; none from a file that
    has no table yet."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return query(db)
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):
            return []
        raise
    finally:
        db.close()


def outputs_switched(path: Path, actions: tuple[str, ...], *, since: float,
                     until: float) -> list[tuple[str, str, str]]:
    """``(board, pin, label)`` of each pin an ``ok`` record of one of ``actions`` switched in
    ``[since, until)``, in the order each first did (a chart's output tracks). No file yet:
    none."""
    if not Path(path).exists():
        return []
    rows = _read_only(path, lambda db: db.execute(
        f"SELECT board, pin, label FROM actuations WHERE at >= ? AND at < ? AND outcome = 'ok' "
        f"AND action IN ({', '.join('?' * len(actions))}) GROUP BY board, pin, label "
        "ORDER BY min(at)", (since, until, *actions)).fetchall())
    return [(str(board), str(pin), str(label or "")) for board, pin, label in rows]


SOMEONE_ELSE = "someone else"
"""Who another caller is, in a history shown to a person who is not an admin."""


def for_person(records: list[Actuation], caller: str) -> list[Actuation]:
    """What a person who is not an admin may see: their own records, and what the door did to
    the pins they asked about (the agent's timers, safe states and trips as they are; another
    caller as :data:`SOMEONE_ELSE`, with no door or why that could name them)."""
    theirs = {(a.board, a.pin) for a in records if a.caller == caller}
    shown: list[Actuation] = []
    for a in records:
        if a.caller == caller or (a.caller == "agent" and (a.board, a.pin) in theirs):
            shown.append(a)
        elif (a.board, a.pin) in theirs:
            shown.append(replace(a, caller=SOMEONE_ELSE, door="", why=""))
    return shown


def describe(actuation: Actuation) -> str:
    """One line of history: ``2026-05-01 07:00:02 pump: on (read back on) by telegram:42
    (telegram, message 17)``; a folded refusal says how often: ``... ×40 between 07:00:02 and
    07:00:31``."""
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(actuation.at))
    what = actuation.receipt()
    if actuation.action not in ("write", "pwm", "servo", "call"):
        what = f"{what} [{actuation.action}]"
    if actuation.count > 1:
        first = time.strftime("%H:%M:%S", time.localtime(actuation.first_at or actuation.at))
        what = f"{what} ×{actuation.count} between {first} and {when[11:]}"
    said = (actuation.caller, actuation.caller.partition(":")[2])  # no need to say it twice
    why = f", {actuation.why}" if actuation.why and actuation.why not in said else ""
    door = f" ({actuation.door}{why})" if actuation.door else ""
    return f"{when} {what} by {actuation.caller or 'agent'}{door}"


def history_text(records: list[Actuation], pin: str | None = None) -> str:
    """Records as lines, oldest first, or a sentence saying there are none."""
    if not records:
        return f"No actuations of {pin} are recorded." if pin else "No actuations are recorded."
    return "\n".join(describe(a) for a in records)
