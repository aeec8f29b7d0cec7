"""The history file stays bounded: one quantity read every 30 s, at steady state (two years of
hourly figures, 90 days of 5-minute figures, 48 hours of raw readings, as the retention keeps
them) takes about 2.2 MB of a real SQLite file (the README's figure), and a further day of
readings, written and pruned as the agent does, does not grow it."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

from edge.readings.store import DAY, HOUR, RAW_KEEP_SECONDS, TIERS, Entry, ReadingStore

NOW = 1_800_000_000.0
README_FIGURE = 2.2e6
"""What the README says one quantity every 30 s takes."""


def spaced(start: float, end: float, every: float, rng: random.Random) -> list[Entry]:
    """Readings from ``start`` to ``end``, ``every`` seconds apart, real-looking (fractional
    times and values: SQLite keeps whole numbers smaller)."""
    count = int((end - start) / every)
    return [Entry("greenhouse", "temperature", "°C", start + i * every + rng.random(),
                  20 + 8 * rng.random()) for i in range(count)]


def write(store: ReadingStore, entries: list[Entry], batch: int) -> None:
    for i in range(0, len(entries), batch):
        store.write_now(entries[i:i + batch])


def file_bytes(path: Path) -> int:
    """The database and its write-ahead log, after the log is folded in."""
    db = sqlite3.connect(path)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    return sum(p.stat().st_size for p in (path, Path(f"{path}-wal")) if p.exists())


def test_one_quantity_every_30_seconds_stays_bounded_at_steady_state(tmp_path: Path) -> None:
    now = [NOW]
    store = ReadingStore.in_state_dir(tmp_path / "state", clock=lambda: now[0])
    rng = random.Random(29)
    five_min, hours = TIERS
    # as many rows as the retention keeps: one reading per hourly row beyond 90 days, one per
    # 5-minute row beyond 48 hours, and every 30 s reading within them
    write(store, spaced(NOW - hours.keep, NOW - five_min.keep, HOUR, rng), 1000)
    write(store, spaced(NOW - five_min.keep, NOW - RAW_KEEP_SECONDS, 300, rng), 1000)
    write(store, spaced(NOW - RAW_KEEP_SECONDS, NOW, 30, rng), 10)
    store.maintain_now()
    rows = store.stats()
    assert rows["raw"] == RAW_KEEP_SECONDS / 30 == 5760
    assert abs(rows["five_min"] - five_min.keep / 300) <= 1
    assert abs(rows["hours"] - hours.keep / HOUR) <= 1
    filled = file_bytes(store.path)

    # a day more, at the agent's pace: a batch every 5 s (here of one 30 s reading each ten
    # batches: ten readings a batch), pruned every 10 minutes
    day = spaced(NOW, NOW + DAY, 30, rng)
    for i in range(0, len(day), 20):
        write(store, day[i:i + 20], 10)
        now[0] = day[min(i + 20, len(day) - 1)].at
        store.maintain_now()
    steady = file_bytes(store.path)
    store.close_now()
    print(f"history of one quantity every 30 s at steady state: {filled / 1e6:.2f} MB filled, "
          f"{steady / 1e6:.2f} MB a day later")
    assert steady <= filled * 1.05  # freed pages are used again: the file does not grow
    assert filled <= README_FIGURE * 1.1
    assert filled >= README_FIGURE * 0.8  # the figure is what it measures, not a loose bound
