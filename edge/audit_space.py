"""What the audit trail keeps when it must let go: ``[audit] keep_days`` and
``[audit] max_megabytes``, held after every group commit.

The cap counts the whole trail on disk, the database and its write-ahead log: the log is kept
to an eighth of the cap (at most 1 MiB; ``wal_autocheckpoint``, ``journal_size_limit``) and the
rows to the rest. When the rows take more, they go in this order, oldest first within each:

1. refusals (a flood of them is what fills a trail; a caller's repeated refusal is already one
   row with a count, :mod:`edge.audit`);
2. failures;
3. actuations, auto-offs, safe states and trips: only while they alone are over the cap.

Rows older than ``keep_days`` go whatever they are (checked at start and hourly). Freed pages are
handed back to the file system (``auto_vacuum = INCREMENTAL``), so the file itself shrinks.

>>> import sqlite3
>>> space = AuditSpace(keep_days=365, max_megabytes=1)
>>> space.wal_bytes, space.rows_bytes
(131072, 917504)
"""

from __future__ import annotations

import logging
import math
import sqlite3
import time

log = logging.getLogger(__name__)

DAY = 86400.0
MIB = 1024 * 1024
KEEP_DAYS_EVERY_SECONDS = 3600.0
LOW_WATER = 0.9
"""A prune frees rows down to this share of the rows' budget, so the next writes do not prune."""
LAST_TO_GO = ("outcome = 'refused'", "outcome = 'failed'", "1")
"""Which rows go first when over the cap: refusals, failures, then everything else."""
PRUNE_ROUNDS = 40


class AuditSpace:
    def __init__(self, keep_days: float, max_megabytes: float):
        self.keep_days = keep_days
        self.cap_bytes = int(max_megabytes * MIB)
        self.wal_bytes = max(32 * 1024, min(MIB, self.cap_bytes // 8))
        self.rows_bytes = max(self.cap_bytes - self.wal_bytes, 64 * 1024)
        self._aged_at = 0.0

    def configure(self, db: sqlite3.Connection) -> None:
        """Before the tables exist: incremental vacuum (an older file is rebuilt once for it,
        when the disk has room) and a write-ahead log an eighth of the cap."""
        if db.execute("PRAGMA auto_vacuum").fetchone()[0] != 2:
            db.execute("PRAGMA auto_vacuum = INCREMENTAL")
            if db.execute("PRAGMA page_count").fetchone()[0]:
                try:  # a trail an older agent made: once, needs room for a copy
                    db.execute("VACUUM")
                except sqlite3.OperationalError as exc:
                    log.warning("audit_vacuum_skipped error=%r", str(exc))
        size = db.execute("PRAGMA page_size").fetchone()[0]
        db.execute(f"PRAGMA wal_autocheckpoint = {max(8, self.wal_bytes // size)}")
        db.execute(f"PRAGMA journal_size_limit = {self.wal_bytes}")

    def keep(self, db: sqlite3.Connection, now: float | None = None, *,
             aged: bool = False) -> int:
        """After a commit: drop rows past ``keep_days`` (hourly, or now with ``aged``) and, while
        the rows are over their budget, the least important; how many went."""
        now = time.time() if now is None else now
        gone = 0
        if aged or now - self._aged_at > KEEP_DAYS_EVERY_SECONDS:
            self._aged_at = now
            gone += db.execute("DELETE FROM actuations WHERE at < ?",
                               (now - self.keep_days * DAY,)).rowcount
        if used_bytes(db) > self.rows_bytes:
            gone += self._prune(db)
        if gone or file_bytes(db) > self.rows_bytes:
            db.execute("PRAGMA incremental_vacuum")
        if gone:
            log.info("audit_pruned rows=%d bytes=%d", gone, used_bytes(db))
        return gone

    def _prune(self, db: sqlite3.Connection) -> int:
        low = int(self.rows_bytes * LOW_WATER)
        gone = 0
        for clause in LAST_TO_GO:
            for _ in range(PRUNE_ROUNDS):
                used = used_bytes(db)
                if used <= low:
                    return gone
                rows = db.execute("SELECT count(*) FROM actuations").fetchone()[0]
                if not rows:
                    return gone
                per_row = max(1.0, used / rows)
                batch = max(8, math.ceil((used - low) / per_row))
                went = db.execute(
                    f"DELETE FROM actuations WHERE id IN (SELECT id FROM actuations "  # noqa: S608
                    f"WHERE {clause} ORDER BY id LIMIT ?)", (batch,)).rowcount
                if not went:
                    break
                gone += went
        return gone


def used_bytes(db: sqlite3.Connection) -> int:
    """The bytes the rows take (the file's pages less its free ones)."""
    pages = db.execute("PRAGMA page_count").fetchone()[0]
    free = db.execute("PRAGMA freelist_count").fetchone()[0]
    size = db.execute("PRAGMA page_size").fetchone()[0]
    return int((pages - free) * size)


def file_bytes(db: sqlite3.Connection) -> int:
    pages = db.execute("PRAGMA page_count").fetchone()[0]
    return int(pages * db.execute("PRAGMA page_size").fetchone()[0])
