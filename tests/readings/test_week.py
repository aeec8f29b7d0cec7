"""A week of a greenhouse thermometer read every 30 s, on a fast clock: the recorder keeps it in a
real SQLite file as the agent would (listener, supervised writer and upkeep paced by the clock),
and the history that comes back is the week's: raw for the last 48 hours, 5-minute and hourly
figures equal to those of the readings, the file bounded to the retention's rows, and a gap where
the sensor was failing. (What a crash loses is measured on a real agent, in test_agent.py.)"""

from __future__ import annotations

import sqlite3
from datetime import timedelta

import pytest
import pytest_asyncio

from edge.readings.store import RAW_KEEP_SECONDS
from tests.helpers import until
from tests.readings.fast_week import FAILING, FLUSH_SECONDS, INTERVAL, START, WEEK, record_week

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def week(tmp_path_factory: pytest.TempPathFactory):
    recorded = await record_week(tmp_path_factory.mktemp("week") / "state")
    yield recorded
    await recorded.recorder.aclose()


def expected(taken: list[tuple[float, float | None]], start: float, end: float) -> list[float]:
    return [v for at, v in taken if start <= at < end and v is not None]


async def test_the_writer_keeps_every_reading_and_failure_of_the_week(week) -> None:
    clock, sensor, recorder, store = week
    await clock.advance(timedelta(seconds=FLUSH_SECONDS))  # the writer's next round, no reading
    await until(lambda: recorder.pending == 0 and not recorder.flushing, timeout=30)
    db = sqlite3.connect(f"file:{store.path}?mode=ro", uri=True)  # as a restarted agent would
    kept = db.execute("SELECT sum(count), sum(failures) FROM five_min").fetchone()
    assert kept == (sum(v is not None for _, v in sensor.taken),
                    sum(v is None for _, v in sensor.taken)) == (19800, 360)
    assert recorder.dropped == 0


async def test_the_file_holds_the_retention_and_no_more(week) -> None:
    clock, sensor, recorder, store = week
    await recorder.flush()
    await store.maintain()
    rows = store.stats()
    raw_span = RAW_KEEP_SECONDS / INTERVAL
    assert raw_span <= rows["raw"] <= raw_span + 1
    assert rows["five_min"] == WEEK / 300 + 1  # the week's, and the one just begun
    assert rows["hours"] == WEEK / 3600 + 1
    oldest = sqlite3.connect(store.path).execute("SELECT min(at) FROM raw").fetchone()[0]
    assert oldest >= clock.now().timestamp() - RAW_KEEP_SECONDS


async def test_the_week_in_two_hour_buckets_is_the_readings_and_a_gap_where_it_failed(week) -> None:
    clock, sensor, recorder, store = week
    await recorder.flush()
    end = START.timestamp() + WEEK
    [series] = await store.series("greenhouse", "temperature", START.timestamp(), end,
                                  max_points=84)
    assert series.step == 7200 and len(series.buckets) == 84 and series.unit == "°C"
    failing = [b for b in series.buckets if b.mean is None]
    assert [(b.start, b.end) for b in failing] == [
        (FAILING[0].timestamp() + i * 7200, FAILING[0].timestamp() + (i + 1) * 7200)
        for i in range(1)]  # 02:00-04:00 is all failing; 04:00-06:00 has an hour of readings
    assert failing[0].failures == 240 and failing[0].count == 0
    for bucket in series.buckets:
        if bucket.mean is None:
            continue
        values = expected(sensor.taken, bucket.start, bucket.end)
        assert bucket.count == len(values)
        assert bucket.low == min(values) and bucket.high == max(values)
        assert bucket.mean == pytest.approx(sum(values) / len(values))
    summary = series.summary()
    everything = expected(sensor.taken, START.timestamp(), end)
    assert (summary.low, summary.high, summary.count) == (min(everything), max(everything),
                                                          len(everything))
    assert (summary.gaps, summary.failing) == (1, 1)


async def test_last_night_is_answered_from_the_raw_readings(week) -> None:
    clock, sensor, recorder, store = week
    await recorder.flush()
    night = (START + timedelta(days=6, hours=-2)).timestamp(), (START + timedelta(days=6, hours=6)).timestamp()
    [series] = await store.series("greenhouse", None, *night)
    assert series.step == 300 and len(series.buckets) == 96  # 8 hours in 5-minute buckets
    values = expected(sensor.taken, *night)
    summary = series.summary()
    assert summary.low == min(values) and summary.high == max(values)
    coldest = min((v, at) for at, v in sensor.taken if v is not None and night[0] <= at < night[1])
    assert summary.low_at is not None and summary.low_at <= coldest[1] < summary.low_at + 300
