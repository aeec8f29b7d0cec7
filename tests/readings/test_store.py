"""The sensor history's file: a private SQLite file whose 5-minute and hourly figures are those of
the raw readings, read back as raw readings when few or as a regular grid of buckets from the
finest tier still covering the span, with gaps where nothing (or only failures) was recorded."""

from __future__ import annotations

import asyncio
import sqlite3
import stat
from pathlib import Path

import pytest

from edge.readings.store import DAY, HOUR, RAW_KEEP_SECONDS, Entry, ReadingStore, pick_step

NOW = 1_800_000_000.0  # a fixed "now": 2027-01-15 08:00 UTC, a multiple of an hour
T = "temperature"


def entry(at: float, value: float | None, sensor: str = "shed", quantity: str = T) -> Entry:
    return Entry(sensor, quantity, "°C", at, value)


@pytest.fixture
def store(tmp_path: Path):
    s = ReadingStore.in_state_dir(tmp_path / "state", clock=lambda: NOW)
    yield s
    asyncio.run(s.close())


def test_the_file_is_private_in_a_private_directory(store: ReadingStore) -> None:
    store.write_now([entry(NOW - 60, 20.0)])
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(store.path.parent.stat().st_mode) == 0o700
    wal = Path(f"{store.path}-wal")
    assert stat.S_IMODE(wal.stat().st_mode) == 0o600
    mode = sqlite3.connect(store.path).execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"


def test_the_tiers_hold_the_minimum_mean_maximum_of_the_raw_readings(store: ReadingStore) -> None:
    start = NOW - HOUR  # on an hour: twelve 5-minute buckets
    values = [(start + i * 30, 10.0 + (i % 10)) for i in range(120)]  # an hour at 30 s
    store.write_now([entry(at, v) for at, v in values[:50]])  # two batches, as the writer does
    store.write_now([entry(at, v) for at, v in values[50:]])
    db = sqlite3.connect(store.path)
    five = db.execute("SELECT start, low, high, total, count, failures FROM five_min "
                      "ORDER BY start").fetchall()
    assert len(five) == 12
    for row in five:
        inside = [v for at, v in values if row[0] <= at < row[0] + 300]
        assert row[1:] == (min(inside), max(inside), sum(inside), len(inside), 0)
    [hour] = db.execute("SELECT start, low, high, total, count FROM hours").fetchall()
    all_values = [v for _, v in values]
    assert hour == (int(start), min(all_values), max(all_values), sum(all_values), 120)


def test_a_short_span_is_raw_readings_and_failures_are_gaps(store: ReadingStore) -> None:
    store.write_now([entry(NOW - 90, 20.0), entry(NOW - 60, None), entry(NOW - 30, 21.0)])
    [series] = store.series_now("shed", T, NOW - 120, NOW)
    assert series.step == 0
    assert [(b.start, b.mean, b.count, b.failures) for b in series.buckets] == [
        (NOW - 90, 20.0, 1, 0), (NOW - 60, None, 0, 1), (NOW - 30, 21.0, 1, 0)]
    summary = series.summary()
    assert (summary.low, summary.high, summary.high_at, summary.gaps, summary.failing) == (
        20.0, 21.0, NOW - 30, 1, 1)


def test_many_readings_become_a_grid_of_at_most_max_points(store: ReadingStore) -> None:
    since = NOW - DAY
    store.write_now([entry(since + i * 30, float(i % 60)) for i in range(2880)])
    [series] = store.series_now("shed", T, since, NOW, max_points=100)
    assert series.step == 900 and len(series.buckets) == 96
    assert all(b.end - b.start == 900 for b in series.buckets)
    first = series.buckets[0]  # readings 0..29: values 0..29
    assert (first.low, first.mean, first.high, first.count) == (0.0, 14.5, 29.0, 30)


def test_a_span_of_raw_readings_counts_only_those_since_its_start(store: ReadingStore) -> None:
    store.write_now([entry(NOW - 2 * HOUR + i * 60, float(i)) for i in range(120)])  # 2 h at 60 s
    since = NOW - HOUR + 14 * 60  # not on a bucket's edge
    [series] = store.series_now("shed", T, since, NOW, max_points=6)
    assert series.step > 0 and series.since == since == series.buckets[0].start
    inside = [i for i in range(120) if NOW - 2 * HOUR + i * 60 >= since]
    summary = series.summary()
    assert summary.count == len(inside) and summary.low == float(inside[0])


def test_a_span_read_from_a_tier_is_widened_to_whole_buckets(store: ReadingStore) -> None:
    week_ago = NOW - 7 * DAY
    store.write_now([entry(week_ago + i * 30, 5.0) for i in range(240)])
    store.maintain_now()
    [series] = store.series_now("shed", T, week_ago + 100, week_ago + HOUR, max_points=100)
    assert series.since == week_ago == series.buckets[0].start  # said, not hidden
    assert series.summary().count == 120


def test_an_old_span_is_read_from_the_tier_that_still_covers_it(store: ReadingStore) -> None:
    week_ago = NOW - 7 * DAY
    store.write_now([entry(week_ago + i * 30, 5.0) for i in range(240)])  # 2 h, a week ago
    store.maintain_now()
    assert sqlite3.connect(store.path).execute("SELECT count(*) FROM raw").fetchone()[0] == 0
    [series] = store.series_now("shed", T, week_ago - HOUR, week_ago + 3 * HOUR, max_points=100)
    assert series.step == 300  # the 5-minute tier's width at least, never finer
    good = [b for b in series.buckets if b.mean is not None]
    assert len(good) == 24 and {b.count for b in good} == {10} and good[0].start == week_ago
    assert series.buckets[0].mean is None and series.buckets[0].failures == 0  # nothing recorded


def test_retention_keeps_each_tier_for_its_span(store: ReadingStore) -> None:
    ages = [HOUR, 3 * DAY, 100 * DAY, 800 * DAY]
    store.write_now([entry(NOW - age, 1.0) for age in ages])
    store.maintain_now()
    db = sqlite3.connect(store.path)
    ago = {table: sorted(NOW - at for (at,) in db.execute(
        f"SELECT {'at' if table == 'raw' else 'start'} FROM {table}")) for table in
        ("raw", "five_min", "hours")}
    assert ago["raw"] == [HOUR]
    assert ago["five_min"] == [HOUR, 3 * DAY]
    assert ago["hours"] == [HOUR, 3 * DAY, 100 * DAY]
    assert RAW_KEEP_SECONDS == 2 * DAY


def test_raw_keeps_at_most_one_reading_a_second_but_the_tiers_count_them_all(
        store: ReadingStore) -> None:
    store.write_now([entry(NOW - 10 + i * 0.1, float(i)) for i in range(50)])  # 10 Hz for 5 s
    db = sqlite3.connect(store.path)
    assert db.execute("SELECT count(*) FROM raw").fetchone()[0] == 5
    assert db.execute("SELECT sum(count), max(high) FROM five_min").fetchone() == (50, 49.0)


def test_quantities_are_separate_series_and_unknown_ones_have_none(store: ReadingStore) -> None:
    store.write_now([entry(NOW - 30, 20.0), entry(NOW - 30, 55.0, quantity="humidity")])
    assert [s.quantity for s in store.series_now("shed", None, NOW - 60, NOW)] == [
        "humidity", T]
    assert store.series_now("shed", "pressure", NOW - 60, NOW) == []
    assert store.series_now("barn", None, NOW - 60, NOW) == []
    assert store.known() == {"shed": {"humidity": "°C", T: "°C"}}


async def test_a_read_only_store_never_creates_the_file(tmp_path: Path) -> None:
    reader = ReadingStore.in_state_dir(tmp_path / "state", read_only=True, clock=lambda: NOW)
    assert await reader.series("shed", None, NOW - 60, NOW) == []
    assert await reader.catalog() == {}
    assert not (tmp_path / "state").exists()
    with pytest.raises(PermissionError):
        await reader.write([entry(NOW, 1.0)])
    await reader.close()


async def test_a_write_that_fails_leaves_nothing_half_written(store: ReadingStore) -> None:
    store.write_now([entry(NOW - 60, 20.0)])
    with pytest.raises(TypeError):
        await store.write([entry(NOW - 30, 21.0), entry(NOW - 20, "warm")])  # type: ignore[arg-type]
    db = sqlite3.connect(store.path)
    assert db.execute("SELECT count(*) FROM raw").fetchone()[0] == 1
    assert db.execute("SELECT sum(count) FROM five_min").fetchone()[0] == 1
    await store.write([entry(NOW - 10, 22.0)])  # and the store goes on
    assert db.execute("SELECT count(*) FROM raw").fetchone()[0] == 2


def test_steps_are_nice_and_never_give_more_than_max_points() -> None:
    for span in (60.0, HOUR, DAY, 7 * DAY, 90 * DAY, 730 * DAY):
        for points in (10, 100, 300):
            step = pick_step(NOW - span, NOW, points)
            start = (NOW - span) // step * step
            assert (NOW - start) / step <= points
            assert step < 300 or step % 300 == 0
            assert step < HOUR or step % HOUR == 0


def test_last_low_and_high_are_readings_with_their_own_times(store: ReadingStore) -> None:
    """The trial's history: ``last 23.07 at 01:55`` (the last bucket's mean at its start) while
    the last reading was 17.6 at 01:59:30; low and high stamped with their bucket's start."""
    since = NOW - HOUR
    readings = [(since + i * 10, 23.0 + (i % 7) * 0.01) for i in range(359)]
    readings[100] = (since + 1003.0, 9.25)  # the low, 43 s into its 5-minute bucket
    readings[200] = (since + 2017.0, 31.5)  # the high, inside another
    readings.append((NOW - 17, 17.6))  # the last reading, far from its bucket's mean
    store.write_now([entry(at, v) for at, v in readings])
    [series] = store.series_now("shed", T, since, NOW, max_points=12)
    assert series.step == 300 and len(series.buckets) == 12
    last_bucket = series.buckets[-1]
    assert last_bucket.mean is not None and abs(last_bucket.mean - 17.6) > 5  # what was shown
    summary = series.summary()
    assert (summary.last, summary.last_at) == (17.6, NOW - 17)
    assert (summary.low, summary.low_at) == (9.25, since + 1003.0)
    assert (summary.high, summary.high_at) == (31.5, since + 2017.0)
    assert summary.first_at == since and summary.exact
    assert series.as_dict()["summary"]["last_at"] == NOW - 17  # the JSON says the same


def test_an_old_span_stamps_its_extremes_with_their_five_minutes(store: ReadingStore) -> None:
    week_ago = NOW - 7 * DAY
    store.write_now([entry(week_ago + i * 30, 5.0 + (i == 77)) for i in range(240)])
    store.maintain_now()
    [series] = store.series_now("shed", T, week_ago, week_ago + 2 * HOUR, max_points=4)
    summary = series.summary()
    assert series.step == 1800 and not summary.exact
    assert (summary.high, summary.high_at) == (6.0, week_ago + 77 * 30 // 300 * 300)
    assert (summary.last, summary.last_at) == (5.0, week_ago + 2 * HOUR - 300)
