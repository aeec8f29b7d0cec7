"""When a schedule fires: cron in its zone through DST, every from the last run, at once."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from edge.automation.schedule import MISSED_LIMIT, Schedule, wall_instants
from edge.config.schedules import ScheduleConfig


def schedule(**timing: str) -> Schedule:
    return Schedule(ScheduleConfig(name="job", action="gpio write pump on", **timing))


def fires(job: Schedule, after: datetime, count: int) -> list[str]:
    """The next ``count`` occurrences as local wall times with their zone abbreviation."""
    out, t = [], after
    for _ in range(count):
        t = job.next_after(t)
        out.append(t.astimezone(job.zone).strftime("%m-%d %H:%M %Z"))
    return out


def test_cron_fires_at_the_minute_in_its_zone():
    pump = schedule(cron="0 6 * * *", timezone="Europe/Berlin")
    after = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
    assert pump.next_after(after) == datetime(2026, 6, 2, 4, 0, tzinfo=UTC)  # 06:00 CEST
    assert fires(pump, after, 2) == ["06-02 06:00 CEST", "06-03 06:00 CEST"]


def test_cron_next_is_strictly_after():
    job = schedule(cron="*/15 * * * *", timezone="UTC")
    at = datetime(2026, 6, 1, 12, 15, tzinfo=UTC)
    assert job.next_after(at) == datetime(2026, 6, 1, 12, 30, tzinfo=UTC)
    assert job.next_after(at - timedelta(microseconds=1)) == at


def test_weekdays_and_names():
    job = schedule(cron="30 7 * * MON-FRI", timezone="UTC")
    saturday = datetime(2026, 11, 28, 12, 0, tzinfo=UTC)
    assert fires(job, saturday, 2) == ["11-30 07:30 UTC", "12-01 07:30 UTC"]


@pytest.mark.parametrize("zone,after,expected", [
    # Europe/Berlin springs forward on 2026-03-29 at 02:00 CET to 03:00 CEST
    ("Europe/Berlin", datetime(2026, 3, 28, 12, tzinfo=UTC), ["03-29 03:00 CEST", "03-30 02:30 CEST"]),
    # America/New_York on 2026-03-08 at 02:00 EST to 03:00 EDT
    ("America/New_York", datetime(2026, 3, 7, 12, tzinfo=UTC), ["03-08 03:00 EDT", "03-09 02:30 EDT"]),
])
def test_a_time_skipped_by_spring_forward_runs_once_right_after_the_gap(zone, after, expected):
    assert fires(schedule(cron="30 2 * * *", timezone=zone), after, 2) == expected


def test_several_times_in_the_gap_run_once_after_it():
    job = schedule(cron="*/20 * * * *", timezone="Europe/Berlin")
    assert fires(job, datetime(2026, 3, 29, 0, 30, tzinfo=UTC), 4) == [
        "03-29 01:40 CET", "03-29 03:00 CEST", "03-29 03:20 CEST", "03-29 03:40 CEST"]


@pytest.mark.parametrize("zone,cron,after,expected", [
    # Europe/Berlin falls back on 2026-10-25 at 03:00 CEST to 02:00 CET: 02:30 happens twice
    ("Europe/Berlin", "30 2 * * *", datetime(2026, 10, 24, 12, tzinfo=UTC),
     ["10-25 02:30 CEST", "10-26 02:30 CET"]),
    # America/New_York on 2026-11-01 at 02:00 EDT to 01:00 EST: 01:30 happens twice
    ("America/New_York", "30 1 * * *", datetime(2026, 10, 31, 12, tzinfo=UTC),
     ["11-01 01:30 EDT", "11-02 01:30 EST"]),
])
def test_a_time_repeated_by_fall_back_runs_once(zone, cron, after, expected):
    assert fires(schedule(cron=cron, timezone=zone), after, 2) == expected


def test_a_repeated_time_runs_once_even_when_asked_from_inside_the_repeat():
    job = schedule(cron="30 2 * * *", timezone="Europe/Berlin")
    second_pass = datetime(2026, 10, 25, 1, 0, tzinfo=UTC)  # 02:00 CET, after the first 02:30
    assert fires(job, second_pass, 1) == ["10-26 02:30 CET"]


def test_an_hourly_job_keeps_its_rhythm_through_the_repeated_hour():
    job = schedule(cron="0 * * * *", timezone="Europe/Berlin")
    assert fires(job, datetime(2026, 10, 24, 23, 30, tzinfo=UTC), 3) == [
        "10-25 02:00 CEST", "10-25 02:00 CET", "10-25 03:00 CET"]
    job = schedule(cron="0 * * * *", timezone="America/New_York")
    assert fires(job, datetime(2026, 11, 1, 4, 30, tzinfo=UTC), 3) == [
        "11-01 01:00 EDT", "11-01 01:00 EST", "11-01 02:00 EST"]


def test_wall_instants_places_local_times_on_the_utc_line():
    berlin = ZoneInfo("Europe/Berlin")
    assert wall_instants(datetime(2026, 6, 1, 6, 0), berlin) == [datetime(2026, 6, 1, 4, 0, tzinfo=UTC)]
    assert wall_instants(datetime(2026, 3, 29, 2, 59), berlin) == [datetime(2026, 3, 29, 1, 0, tzinfo=UTC)]
    assert len(wall_instants(datetime(2026, 10, 25, 2, 0), berlin)) == 2


def test_every_counts_real_time_from_the_last_run_through_dst():
    job = schedule(every="1h30m", timezone="Europe/Berlin")
    last = datetime(2026, 3, 29, 0, 30, tzinfo=UTC)  # 01:30 CET
    assert job.next_after(last) == last + timedelta(minutes=90)
    assert fires(job, last, 1) == ["03-29 04:00 CEST"]


def test_at_runs_once():
    job = schedule(at="2026-12-01 06:00", timezone="Europe/Berlin")
    assert job.is_once
    assert job.next_after(datetime(2026, 11, 1, tzinfo=UTC)) == datetime(2026, 12, 1, 5, 0, tzinfo=UTC)
    assert job.next_after(datetime(2026, 12, 1, 5, 0, tzinfo=UTC)) is None


def test_at_with_an_offset_ignores_the_zone():
    job = schedule(at="2026-12-01T06:00:00+01:00", timezone="America/New_York")
    assert job.next_after(datetime(2026, 11, 1, tzinfo=UTC)) == datetime(2026, 12, 1, 5, 0, tzinfo=UTC)


def test_at_in_a_gap_runs_after_it():
    job = schedule(at="2026-03-29 02:30", timezone="Europe/Berlin")
    assert job.next_after(datetime(2026, 3, 1, tzinfo=UTC)) == datetime(2026, 3, 29, 1, 0, tzinfo=UTC)


def test_missed_counts_and_names_the_latest():
    cron = schedule(cron="0 * * * *", timezone="UTC")
    after, until = datetime(2026, 6, 1, 0, 0, tzinfo=UTC), datetime(2026, 6, 1, 5, 30, tzinfo=UTC)
    assert cron.missed(after, until) == (5, datetime(2026, 6, 1, 5, 0, tzinfo=UTC))
    every = schedule(every="10m")
    assert every.missed(after, after + timedelta(minutes=35)) == (3, after + timedelta(minutes=30))
    assert every.missed(after, after + timedelta(minutes=5)) == (0, None)


def test_missed_stops_counting_but_still_knows_the_latest():
    job = schedule(cron="* * * * *", timezone="UTC")
    after = datetime(2026, 6, 1, tzinfo=UTC)
    until = after + timedelta(days=3, seconds=30)
    assert job.missed(after, until) == (MISSED_LIMIT, datetime(2026, 6, 4, 0, 0, tzinfo=UTC))
