"""The sensor history's SQLite file, ``<state>/readings.db`` (0600, WAL).

Three tiers, each kept for its own span (:data:`RAW_KEEP_SECONDS`, :data:`TIERS`):

========== ============================== ===========
table      what                           kept
========== ============================== ===========
raw        every reading (None: a failed  48 hours
           read), at most one a second
five_min   min, sum, max, count, failures 90 days
           per 5 minutes
hours      the same per hour              two years
========== ============================== ===========

The 5-minute and hourly rows are kept up to date as each batch is written (one upsert per bucket
the batch touches), so they never wait for a downsampling pass and a chart of last month reads no
raw row; :meth:`ReadingStore.maintain` (periodic, supervised by the recorder) drops what is past
each tier's span and gives the freed pages back (``auto_vacuum = INCREMENTAL``), so the file
stays bounded: about 2.2 MB for one quantity read every 30 s, at steady state
(``tests/readings/test_size.py`` measures it on a real file).

A batch is one transaction (``synchronous = NORMAL`` in WAL: a power cut loses at most the last
transactions, never the file). Every call runs on one worker thread, never on the event loop.

>>> import asyncio, tempfile, pathlib
>>> store = ReadingStore.in_state_dir(pathlib.Path(tempfile.mkdtemp()), clock=lambda: 2000.0)
>>> async def demo():
...     await store.write([Entry("shed", "temperature", "°C", 1000.0 + i * 30, 20.0 + i)
...                        for i in range(4)])
...     [series] = await store.series("shed", None, 1000.0, 1120.0)
...     await store.close()
...     return series.step, [b.mean for b in series.buckets], series.summary().high
>>> asyncio.run(demo())
(0.0, [20.0, 21.0, 22.0, 23.0], 23.0)
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from edge.core.sqlite_files import prepare_sqlite_file
from edge.readings.extremes import raw_extremes, tier_extremes
from edge.readings.series import Bucket, Series

log = logging.getLogger(__name__)

READINGS_FILE = "readings.db"
HOUR = 3600.0
DAY = 86400.0
RAW_KEEP_SECONDS = 2 * DAY
RAW_SPACING_SECONDS = 1.0
"""A quantity's raw readings closer together than this are aggregated but not kept raw (a
sensor polled every 50 ms would otherwise fill 48 hours with 3.5 million rows)."""


@dataclass(frozen=True)
class Tier:
    table: str
    width: float
    keep: float


TIERS = (Tier("five_min", 300.0, 90 * DAY), Tier("hours", HOUR, 730 * DAY))
NICE_STEPS = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600,
              43200, 86400)
"""Bucket widths a series is drawn in (then whole days); those of 300 s and more are multiples
of every tier's width they may be read from."""

SCHEMA = """
CREATE TABLE IF NOT EXISTS quantities (
    id INTEGER PRIMARY KEY, sensor TEXT NOT NULL, quantity TEXT NOT NULL, unit TEXT NOT NULL,
    UNIQUE (sensor, quantity));
CREATE TABLE IF NOT EXISTS raw (
    series INTEGER NOT NULL, at REAL NOT NULL, value REAL,
    PRIMARY KEY (series, at)) WITHOUT ROWID;
""" + "".join(f"""
CREATE TABLE IF NOT EXISTS {tier.table} (
    series INTEGER NOT NULL, start INTEGER NOT NULL, low REAL, high REAL,
    total REAL NOT NULL, count INTEGER NOT NULL, failures INTEGER NOT NULL,
    PRIMARY KEY (series, start)) WITHOUT ROWID;
""" for tier in TIERS)


class Entry(NamedTuple):
    """One reading to keep (``value`` None: the sensor failed to read at ``at``)."""

    sensor: str
    quantity: str
    unit: str
    at: float
    value: float | None


def _upsert(table: str) -> str:
    keep_low = "CASE WHEN low IS NULL OR excluded.low < low THEN excluded.low ELSE low END"
    keep_high = "CASE WHEN high IS NULL OR excluded.high > high THEN excluded.high ELSE high END"
    return (f"INSERT INTO {table} (series, start, low, high, total, count, failures) "
            "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (series, start) DO UPDATE SET "
            f"low = {keep_low}, high = {keep_high}, total = total + excluded.total, "
            "count = count + excluded.count, failures = failures + excluded.failures")


def _rollup(rows: Iterable[tuple[int, float, float | None]], width: float
            ) -> list[tuple[int, int, float | None, float | None, float, int, int]]:
    """(series, at, value) rows as one row per (series, bucket of ``width``)."""
    buckets: dict[tuple[int, int], list[Any]] = {}
    for series, at, value in rows:
        key = (series, int(at // width * width))
        acc = buckets.setdefault(key, [None, None, 0.0, 0, 0])
        if value is None:
            acc[4] += 1
            continue
        acc[0] = value if acc[0] is None else min(acc[0], value)
        acc[1] = value if acc[1] is None else max(acc[1], value)
        acc[2] += value
        acc[3] += 1
    return [(series, start, *acc) for (series, start), acc in buckets.items()]


def pick_step(since: float, until: float, max_points: int, at_least: float = 0.0) -> float:
    """The narrowest nice bucket width (at least ``at_least``) that covers ``[since, until)``
    in at most ``max_points`` buckets aligned on multiples of it.

    >>> pick_step(0, 86400, 100), pick_step(0, 7 * 86400, 100), pick_step(0, 3600, 100, 300)
    (900, 7200, 300)
    """
    def fits(step: float) -> bool:
        return (until - since // step * step) / step <= max_points

    for step in NICE_STEPS:
        if step >= at_least and fits(step):
            return step
    days = 2
    while not fits(days * DAY):
        days += 1
    return days * DAY


T = TypeVar("T")


class ReadingStore:
    """The history file; every method that touches it runs on one worker thread."""

    def __init__(self, path: Path, *, read_only: bool = False,
                 clock: Callable[[], float] = time.time):
        """``read_only``: ``edge-cli`` reading the file with no agent running (never creates
        it). ``clock``: what "now" is for retention and for which tier a span is read from."""
        self.path = Path(path)
        self.read_only = read_only
        self.clock = clock
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="readings")
        self._db: sqlite3.Connection | None = None
        self._ids: dict[tuple[str, str], int] = {}
        self._last_raw: dict[int, float] = {}
        self._lock = threading.Lock()

    @classmethod
    def in_state_dir(cls, state_dir: Path, *, read_only: bool = False,
                     clock: Callable[[], float] = time.time) -> ReadingStore:
        return cls(Path(state_dir) / READINGS_FILE, read_only=read_only, clock=clock)

    async def _run(self, work: Callable[..., T], *args: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._executor, work, *args)

    # writing ---------------------------------------------------------------------------------

    async def write(self, entries: Sequence[Entry]) -> None:
        """Keep ``entries`` (one transaction): raw rows and their 5-minute and hourly figures."""
        if entries:
            await self._run(self.write_now, entries)

    def write_now(self, entries: Sequence[Entry]) -> None:
        with self._lock:
            db = self._writable()
            db.execute("BEGIN IMMEDIATE")
            try:
                rows = [(self._series_id(db, e.sensor, e.quantity, e.unit), e.at, e.value)
                        for e in entries]
                db.executemany("INSERT OR REPLACE INTO raw (series, at, value) VALUES (?, ?, ?)",
                               self._spaced(rows))
                for tier in TIERS:
                    db.executemany(_upsert(tier.table), _rollup(rows, tier.width))
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                self._ids.clear()  # ids handed out in the lost transaction are gone
                raise

    def _spaced(self, rows: list[tuple[int, float, float | None]]
                ) -> list[tuple[int, float, float | None]]:
        """The rows kept raw: a failed read always, a reading at most one a second."""
        kept = []
        for row in sorted(rows, key=lambda r: r[1]):
            series, at, value = row
            last = self._last_raw.get(series)
            if value is not None and last is not None and 0 <= at - last < RAW_SPACING_SECONDS:
                continue
            if value is not None:
                self._last_raw[series] = at
            kept.append(row)
        return kept

    def _series_id(self, db: sqlite3.Connection, sensor: str, quantity: str, unit: str) -> int:
        key = (sensor, quantity)
        found = self._ids.get(key)
        if found is None:
            db.execute("INSERT INTO quantities (sensor, quantity, unit) VALUES (?, ?, ?) "
                       "ON CONFLICT (sensor, quantity) DO UPDATE SET unit = excluded.unit",
                       (sensor, quantity, unit))
            found = int(db.execute("SELECT id FROM quantities WHERE sensor = ? AND quantity = ?",
                                   key).fetchone()[0])
            self._ids[key] = found
        return found

    # upkeep ----------------------------------------------------------------------------------

    async def maintain(self) -> int:
        """Drop rows past each tier's span; how many went."""
        return await self._run(self.maintain_now)

    def maintain_now(self) -> int:
        now = self.clock()
        with self._lock:
            db = self._writable()
            db.execute("BEGIN IMMEDIATE")
            try:
                gone = db.execute("DELETE FROM raw WHERE at < ?",
                                  (now - RAW_KEEP_SECONDS,)).rowcount
                for tier in TIERS:
                    gone += db.execute(f"DELETE FROM {tier.table} WHERE start < ?",
                                       (now - tier.keep,)).rowcount
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.executescript("PRAGMA incremental_vacuum;")  # every freed page (execute: one)
        if gone:
            log.info("readings_pruned rows=%d", gone)
        return gone

    def stats(self) -> dict[str, int]:
        """Rows per table and the file's bytes in use (for status and the size figure)."""
        with self._lock:
            db = self._connect()
            if db is None:
                return {}
            out = {table: int(db.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
                   for table in ("raw", *(t.table for t in TIERS))}
            pages = db.execute("PRAGMA page_count").fetchone()[0]
            free = db.execute("PRAGMA freelist_count").fetchone()[0]
            out["bytes"] = int((pages - free) * db.execute("PRAGMA page_size").fetchone()[0])
            return out

    # reading ---------------------------------------------------------------------------------

    async def series(self, sensor: str, quantity: str | None, since: float, until: float,
                     max_points: int = 100) -> list[Series]:
        """``sensor``'s history in ``[since, until)``, one series per quantity (all of them when
        ``quantity`` is None), each at most ``max_points`` buckets: raw readings when they are
        few enough, else minimum/mean/maximum per bucket from the finest tier that still covers
        ``since``. A sensor or quantity with no history: ``[]``."""
        return await self._run(self.series_now, sensor, quantity, since, until, max_points)

    def series_now(self, sensor: str, quantity: str | None, since: float, until: float,
                   max_points: int = 100) -> list[Series]:
        with self._lock:
            db = self._connect()
            if db is None:
                return []
            query = "SELECT id, quantity, unit FROM quantities WHERE sensor = ?"
            args: tuple[str, ...] = (sensor,)
            if quantity is not None:
                query, args = query + " AND quantity = ?", (sensor, quantity)
            found = db.execute(query + " ORDER BY quantity", args).fetchall()
            return [self._one(db, sensor, row, since, until, max(1, max_points))
                    for row in found]

    async def began(self, sensor: str) -> float | None:
        """When ``sensor``'s history begins: the oldest hour with a good reading (kept two
        years); None: no history."""
        return await self._run(self.began_now, sensor)

    def began_now(self, sensor: str) -> float | None:
        with self._lock:
            db = self._connect()
            row = None if db is None else db.execute(
                "SELECT min(start) FROM hours JOIN quantities ON hours.series = quantities.id "
                "WHERE sensor = ? AND count > 0", (sensor,)).fetchone()
            return None if row is None or row[0] is None else float(row[0])

    async def catalog(self) -> dict[str, dict[str, str]]:
        """Sensor -> quantity -> unit, for everything with history."""
        return await self._run(self.known)

    def known(self) -> dict[str, dict[str, str]]:
        """Sensor -> quantity -> unit, for everything with history."""
        with self._lock:
            db = self._connect()
            rows = [] if db is None else db.execute(
                "SELECT sensor, quantity, unit FROM quantities ORDER BY sensor, quantity")
            out: dict[str, dict[str, str]] = {}
            for sensor, quantity, unit in rows:
                out.setdefault(sensor, {})[quantity] = unit
            return out

    def _one(self, db: sqlite3.Connection, sensor: str, row: tuple[int, str, str], since: float,
             until: float, max_points: int) -> Series:
        series, quantity, unit = row
        now = self.clock()
        raw_tier = since >= now - RAW_KEEP_SECONDS
        if raw_tier:
            raw = db.execute("SELECT at, value FROM raw WHERE series = ? AND at >= ? AND at < ? "
                             "ORDER BY at LIMIT ?", (series, since, until, max_points + 1)
                             ).fetchall()
            if len(raw) <= max_points:
                readings = tuple(Bucket(at, at, value, value, value, 0 if value is None else 1,
                                        1 if value is None else 0) for at, value in raw)
                return Series(sensor, quantity, unit, since, until, 0.0, readings,
                              raw_extremes(db, series, since, until))
            step = pick_step(since, until, max_points)
            sql = ("SELECT CAST((at - ?) / ? AS INTEGER), min(value), sum(value), max(value), "
                   "count(value), count(*) - count(value) FROM raw WHERE series = ? AND at >= ? "
                   "AND at < ? GROUP BY 1")
        else:
            tier = next((t for t in TIERS if since >= now - t.keep), TIERS[-1])
            step = pick_step(since, until, max_points, tier.width)
            sql = ("SELECT CAST((start - ?) / ? AS INTEGER), min(low), sum(total), max(high), "
                   f"sum(count), sum(failures) FROM {tier.table} WHERE series = ? "
                   "AND start >= ? AND start < ? GROUP BY 1")
        origin = since // step * step
        # raw readings are cut at ``since`` exactly (the first bucket starts there); a tier's
        # buckets cannot be cut, so the span is widened to the whole bucket and says so
        first = since if raw_tier else origin
        slots = {int(slot): (low, total, high, count, failures) for slot, low, total, high, count,
                 failures in db.execute(sql, (origin, step, series, first, until))}
        buckets = []
        for slot in range(int(-(-(until - origin) // step))):
            low, total, high, count, failures = slots.get(slot, (None, 0.0, None, 0, 0))
            start = max(origin + slot * step, first)
            mean = total / count if count else None
            buckets.append(Bucket(start, origin + (slot + 1) * step, low if count else None, mean,
                                  high if count else None, int(count), int(failures)))
        extremes = (raw_extremes(db, series, first, until) if raw_tier
                    else tier_extremes(db, tier.table, series, first, until))
        return Series(sensor, quantity, unit, first, until, float(step), tuple(buckets), extremes)

    # the connection --------------------------------------------------------------------------

    def _writable(self) -> sqlite3.Connection:
        db = self._connect()
        if db is None or self.read_only:
            raise PermissionError(f"the sensor history {self.path} is open read-only")
        return db

    def _connect(self) -> sqlite3.Connection | None:
        """The connection; None for a read-only store whose file does not exist (yet)."""
        if self._db is not None:
            return self._db
        if self.read_only:
            if not self.path.exists():
                return None
            db = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, check_same_thread=False)
        else:
            prepare_sqlite_file(self.path)
            db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            db.execute("PRAGMA auto_vacuum = INCREMENTAL")  # a new file only: then it holds
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")
            db.execute("PRAGMA journal_size_limit = 4194304")
            db.executescript(SCHEMA)
        self._db = db
        return db

    async def close(self) -> None:
        await self._run(self.close_now)
        self._executor.shutdown(wait=True)

    def close_now(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None
