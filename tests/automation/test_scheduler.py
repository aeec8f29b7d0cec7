"""The scheduler on a manual clock: jobs fire at their minute, missed runs are handled per job, a
restart never runs an occurrence twice, and wall-clock steps cause neither bursts nor gaps."""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime, timedelta

import pytest

from edge.automation.clock import ManualClock
from edge.automation.schedule import Schedule
from edge.automation.schedule_store import ScheduleStore
from edge.automation.scheduler import CLOCK_WAIT, Scheduler
from edge.config.schedules import ScheduleConfig
from edge.core.exc import UsageError

MIN = timedelta(minutes=1)


def job(name: str, **fields) -> ScheduleConfig:
    return ScheduleConfig(name=name, action=fields.pop("action", f"run {name}"), **fields)


class Agent:
    """One agent process: a scheduler over the store file, recording what it ran and when."""

    def __init__(self, tmp_path, clock: ManualClock, schedules, behaviour=None):
        self.clock, self.path = clock, tmp_path / "schedules.json"
        self.runs: list[tuple[str, datetime, datetime]] = []  # (name, occurrence, started)
        self.behaviour = behaviour or {}
        self.scheduler = Scheduler(schedules, ScheduleStore.open(self.path), self.run, clock)
        self.task: asyncio.Task | None = None

    async def run(self, schedule: Schedule, when: datetime) -> str | None:
        self.runs.append((schedule.name, when, self.clock.now()))
        action = self.behaviour.get(schedule.name)
        return await action(self.clock) if action else None

    def ran(self, name: str | None = None) -> list[str]:
        return [f"{when:%m-%d %H:%M}" for n, when, _ in self.runs if name in (None, n)]

    async def __aenter__(self) -> Agent:
        self.task = asyncio.create_task(self.scheduler.run())
        await self.clock.settle()
        return self

    async def __aexit__(self, *exc) -> None:
        assert self.task is not None
        if self.task.done():
            self.task.result()  # the loop must never end on its own: surface why it did
        self.task.cancel()
        await asyncio.gather(self.task, return_exceptions=True)

    def row(self, name: str):
        return next(row for row in self.scheduler.rows() if row.name == name)


@pytest.fixture
def clock():
    return ManualClock(datetime(2026, 6, 1, 5, 58, tzinfo=UTC))


async def test_a_cron_job_fires_at_its_minute(tmp_path, clock):
    async with Agent(tmp_path, clock, [job("pump", cron="0 6 * * *", timezone="UTC")]) as agent:
        await clock.advance(MIN)
        assert agent.runs == []
        await clock.advance(MIN)
        assert agent.runs == [("pump", clock.now(), clock.now())] and clock.now().strftime("%H:%M") == "06:00"
        await clock.advance(timedelta(days=1))
        assert agent.ran("pump") == ["06-01 06:00", "06-02 06:00"]
        row = agent.row("pump")
        assert (row.last_run, row.last_result, row.source) == (datetime(2026, 6, 2, 6, tzinfo=UTC), "ok", "config")
        assert row.next_run == datetime(2026, 6, 3, 6, tzinfo=UTC)


async def test_every_counts_from_the_start_then_from_each_run(tmp_path, clock):
    async with Agent(tmp_path, clock, [job("probe", every="10m")]) as agent:
        await clock.advance(timedelta(minutes=35))
    assert agent.ran() == ["06-01 06:08", "06-01 06:18", "06-01 06:28"]


async def test_at_fires_once_and_is_done_after_a_restart(tmp_path, clock):
    frost = [job("frost", at="2026-06-01 06:30", timezone="UTC", catch_up="once")]
    async with Agent(tmp_path, clock, frost) as agent:
        await clock.advance(timedelta(hours=1))
        assert agent.ran() == ["06-01 06:30"] and agent.row("frost").next_run is None
    await clock.advance(timedelta(days=1))
    async with Agent(tmp_path, clock, frost) as again:
        await clock.advance(timedelta(days=1))
        assert again.runs == [] and again.row("frost").last_result == "ok"
    assert ScheduleStore.open(tmp_path / "schedules.json").state("frost").done


async def test_an_at_job_moved_later_runs_again(tmp_path, clock):
    async with Agent(tmp_path, clock, [job("frost", at="2026-06-01 06:30", timezone="UTC")]) as agent:
        await clock.advance(timedelta(hours=1))
    async with Agent(tmp_path, clock, [job("frost", at="2026-06-02 06:30", timezone="UTC")]) as agent:
        await clock.advance(timedelta(days=1))
        assert agent.ran() == ["06-02 06:30"]


@pytest.mark.parametrize("zone,cron,start,expected", [
    ("Europe/Berlin", "30 2 * * *", datetime(2026, 3, 28, 12, tzinfo=UTC), ["03-29 01:00", "03-30 00:30"]),
    ("Europe/Berlin", "30 2 * * *", datetime(2026, 10, 24, 12, tzinfo=UTC), ["10-25 00:30", "10-26 01:30"]),
    ("America/New_York", "30 2 * * *", datetime(2026, 3, 7, 12, tzinfo=UTC), ["03-08 07:00", "03-09 06:30"]),
    ("America/New_York", "30 1 * * *", datetime(2026, 10, 31, 12, tzinfo=UTC), ["11-01 05:30", "11-02 06:30"]),
])
async def test_dst_changes_run_each_local_time_once(tmp_path, zone, cron, start, expected):
    clock = ManualClock(start)
    async with Agent(tmp_path, clock, [job("pump", cron=cron, timezone=zone)]) as agent:
        await clock.advance(timedelta(days=2))
    assert agent.ran() == expected  # UTC occurrences


async def downtime(tmp_path, clock, catch_up: str):
    hourly = [job("fan", cron="0 * * * *", timezone="UTC", catch_up=catch_up)]
    async with Agent(tmp_path, clock, hourly) as agent:
        await clock.advance(timedelta(hours=1))
        assert agent.ran() == ["06-01 06:00"]
    await clock.advance(timedelta(hours=5, minutes=20))  # the agent is down until 12:18
    return Agent(tmp_path, clock, hourly)


async def test_catch_up_skip_logs_the_missed_runs_and_waits(tmp_path, clock, caplog):
    caplog.set_level(logging.INFO)
    async with await downtime(tmp_path, clock, "skip") as agent:
        assert agent.runs == []
        assert "schedule_missed name=fan count=6 last=2026-06-01T12:00:00+00:00" in caplog.text
        await clock.advance(timedelta(minutes=45))
        assert agent.ran() == ["06-01 13:00"]


async def test_catch_up_once_runs_once_for_all_missed(tmp_path, clock, caplog):
    caplog.set_level(logging.INFO)
    async with await downtime(tmp_path, clock, "once") as agent:
        assert [(name, f"{when:%H:%M}", f"{started:%H:%M}") for name, when, started in agent.runs] == [
            ("fan", "12:00", "12:18")]
        assert "schedule_catch_up name=fan count=6" in caplog.text
        await clock.advance(timedelta(minutes=45))
        assert agent.ran() == ["06-01 12:00", "06-01 13:00"]


async def test_a_restart_during_a_run_never_runs_it_again(tmp_path, clock):
    async def slow(clock):
        await clock.sleep_until(clock.now() + timedelta(minutes=10))

    pump = [job("pump", cron="0 6 * * *", timezone="UTC", catch_up="once")]
    first = Agent(tmp_path, clock, pump, {"pump": slow})
    async with first:
        await clock.advance(timedelta(minutes=2, seconds=30))
        assert first.ran() == ["06-01 06:00"]
        # the agent dies in the middle of the run: a second one starts from the file on disk
        async with Agent(tmp_path, clock, pump) as second:
            await clock.advance(timedelta(hours=1))
            assert second.runs == [] and second.row("pump").last_result == "running"
            assert second.row("pump").next_run == datetime(2026, 6, 2, 6, tzinfo=UTC)


async def test_the_run_is_on_disk_before_the_action_starts(tmp_path, clock):
    on_disk = []

    async def look(clock):
        on_disk.append(ScheduleStore.open(tmp_path / "schedules.json").state("pump").last_run)

    async with Agent(tmp_path, clock, [job("pump", cron="0 6 * * *", timezone="UTC")], {"pump": look}):
        await clock.advance(timedelta(minutes=3))
    assert on_disk == [datetime(2026, 6, 1, 6, tzinfo=UTC)]


async def test_a_failing_job_is_recorded_and_stops_nothing(tmp_path, clock, caplog):
    async def broken(clock):
        raise RuntimeError("board uno is down")

    jobs = [job("broken", every="1m"), job("probe", every="1m")]
    async with Agent(tmp_path, clock, jobs, {"broken": broken}) as agent:
        await clock.advance(timedelta(minutes=3))
        assert len(agent.ran("broken")) == len(agent.ran("probe")) == 3
        assert agent.row("broken").last_result == "error: board uno is down"
        assert agent.row("probe").last_result == "ok"
    assert "schedule_failed name=broken" in caplog.text


async def test_a_long_run_delays_no_one_and_never_overlaps_itself(tmp_path, clock, caplog):
    async def long(clock):
        await clock.sleep_until(clock.now() + timedelta(seconds=150))
        return "watered"

    jobs = [job("long", every="1m"), job("probe", every="1m")]
    async with Agent(tmp_path, clock, jobs, {"long": long}) as agent:
        await clock.advance(timedelta(minutes=5))
        assert agent.ran("probe") == ["06-01 05:59", "06-01 06:00", "06-01 06:01", "06-01 06:02", "06-01 06:03"]
        assert all(when == started for _, when, started in agent.runs)
        assert agent.ran("long") == ["06-01 05:59", "06-01 06:02"]
        assert agent.row("long").running and agent.row("long").last_result == "running"
        await clock.advance(timedelta(seconds=100))  # 06:04:40: the second run ended at 06:04:30
        assert agent.row("long").last_result == "watered" and not agent.row("long").running
    assert caplog.text.count("schedule_overlap name=long") == 4  # 06:00, 06:01, 06:03, 06:04


async def test_a_forward_step_while_running_runs_each_job_once(tmp_path, caplog):
    # booted at 05:58 real time with the clock still at yesterday's shutdown time, 21:58
    clock = ManualClock(datetime(2026, 5, 31, 21, 58, tzinfo=UTC))
    jobs = [job("pump", cron="0 6 * * *", timezone="UTC"), job("probe", every="10m"),
            job("fan", cron="*/5 * * * *", timezone="UTC")]
    async with Agent(tmp_path, clock, jobs) as agent:
        await clock.advance(timedelta(minutes=2))
        assert agent.ran() == ["05-31 22:00"]  # fan, by the wrong clock
        clock.step(timedelta(hours=8))  # NTP, two minutes after boot: 22:00 -> 06:00
        await clock.advance(timedelta(seconds=40))
        # the 06:00 pump came while the agent ran: it runs. fan (*/5) and probe (every 10m since
        # boot) were jumped over 96 and 48 times: one run each, no burst
        after_step = sorted((name, f"{when:%m-%d %H:%M}") for name, when, _ in agent.runs[1:])
        assert after_step == [("fan", "06-01 06:00"), ("probe", "06-01 05:58"), ("pump", "06-01 06:00")]
        assert "schedule_coalesced name=fan count=96" in caplog.text
        await clock.advance(timedelta(minutes=5))
        assert agent.ran("fan") == ["05-31 22:00", "06-01 06:00", "06-01 06:05"]


async def test_a_forward_step_over_downtime_goes_to_catch_up(tmp_path, caplog):
    caplog.set_level(logging.INFO)
    clock = ManualClock(datetime(2026, 6, 1, 5, 0, tzinfo=UTC))
    pump = [job("pump", cron="0 6 * * *", timezone="UTC")]
    async with Agent(tmp_path, clock, pump):
        await clock.advance(timedelta(hours=1, minutes=1))
    # the Pi is off for two days; it boots with the clock at shutdown time and NTP steps it
    async with Agent(tmp_path, clock, pump) as agent:
        await clock.advance(timedelta(minutes=1))
        clock.step(timedelta(days=2))
        await clock.advance(timedelta(minutes=1))
        assert agent.runs == []
        assert "schedule_missed name=pump count=2" in caplog.text


async def test_a_clock_behind_the_store_waits_for_time_sync(tmp_path, caplog):
    caplog.set_level(logging.INFO)
    clock = ManualClock(datetime(2026, 6, 1, 5, 0, tzinfo=UTC))
    pump = [job("pump", cron="0 6 * * *", timezone="UTC", catch_up="once")]
    async with Agent(tmp_path, clock, pump) as agent:
        await clock.advance(timedelta(hours=1, minutes=1))
        assert agent.ran() == ["06-01 06:00"]
    clock.step(-timedelta(days=365 * 50))  # booted without a real-time clock
    async with Agent(tmp_path, clock, pump) as agent:
        await clock.advance(timedelta(minutes=3))
        clock.step(timedelta(days=365 * 50))
        await clock.advance(timedelta(minutes=1))
        assert agent.runs == []  # 06:00 ran before the reboot
        await clock.advance(timedelta(days=1))
        assert agent.ran() == ["06-02 06:00"]
    assert "schedule_clock_behind" in caplog.text and "schedule_clock_set" in caplog.text


async def test_a_clock_that_never_syncs_is_believed_after_a_while(tmp_path, caplog):
    clock = ManualClock(datetime(2026, 6, 1, 5, 0, tzinfo=UTC))
    probe = [job("probe", every="10m")]
    async with Agent(tmp_path, clock, probe):
        await clock.advance(timedelta(minutes=30))
    clock.step(-timedelta(days=30))
    async with Agent(tmp_path, clock, probe) as agent:
        await clock.advance(CLOCK_WAIT)
        assert agent.runs == []
        await clock.advance(timedelta(minutes=11))
        assert len(agent.runs) == 1
    assert "schedule_clock_accepted" in caplog.text


async def test_a_backward_step(tmp_path, clock, caplog):
    async with Agent(tmp_path, clock, [job("probe", every="10m")]) as agent:
        await clock.advance(timedelta(minutes=11))
        assert agent.ran() == ["06-01 06:08"]
        clock.step(-timedelta(minutes=2))  # small: the job waits, nothing twice
        await clock.advance(timedelta(minutes=9))
        assert agent.ran() == ["06-01 06:08"]
        await clock.advance(timedelta(minutes=3))
        assert agent.ran() == ["06-01 06:08", "06-01 06:18"]
        clock.step(-timedelta(hours=2))  # large: the earlier clock was wrong, count from now
        await clock.advance(timedelta(minutes=11))
        assert len(agent.runs) == 3 and "schedule_clock_stepped_back name=probe" in caplog.text


async def test_runtime_jobs_are_added_listed_kept_and_removed(tmp_path, clock):
    config = [job("pump", cron="0 6 * * *", timezone="UTC")]
    async with Agent(tmp_path, clock, config) as agent:
        with pytest.raises(UsageError, match="'pump' already exists .*config file"):
            agent.scheduler.add(job("pump", every="5m"), added_by="telegram:42")
        with pytest.raises(UsageError, match="has already passed"):
            agent.scheduler.add(job("old", at="2026-01-01 06:00", timezone="UTC"), added_by="telegram:42")
        agent.scheduler.add(job("mist", every="5s", action="gpio write mister on for 2s"), added_by="telegram:42")
        await clock.advance(timedelta(seconds=5))  # wake(): not the loop's 30 s nap
        assert agent.ran("mist") == ["06-01 05:58"] and agent.runs[0][2] == clock.now()
        with pytest.raises(UsageError, match="in the config file"):
            agent.scheduler.remove("pump")
        row = agent.row("mist")
        assert (row.source, row.added_by, row.spec, row.timezone != "") == ("runtime", "telegram:42", "every 5s", True)
        assert row.as_json()["next_run"] == (clock.now() + timedelta(seconds=5)).isoformat()
    async with Agent(tmp_path, clock, config) as again:
        assert [row.name for row in again.scheduler.rows()] == ["pump", "mist"]
        again.scheduler.remove("mist", by="telegram:42")
        with pytest.raises(UsageError, match="no schedule named 'mist'"):
            again.scheduler.remove("mist")
    async with Agent(tmp_path, clock, config) as third:
        assert [row.name for row in third.scheduler.rows()] == ["pump"]


async def test_a_config_job_shadows_a_runtime_job_of_the_same_name(tmp_path, clock, caplog):
    async with Agent(tmp_path, clock, []) as agent:
        agent.scheduler.add(job("mist", every="1h"), added_by="cli")
    async with Agent(tmp_path, clock, [job("mist", cron="0 6 * * *", timezone="UTC")]) as agent:
        assert [(row.name, row.source) for row in agent.scheduler.rows()] == [("mist", "config")]
    assert "schedule_runtime_shadowed name=mist" in caplog.text


async def test_a_disabled_job_does_not_run(tmp_path, clock):
    async with Agent(tmp_path, clock, [job("pump", every="1m", enabled=False)]) as agent:
        await clock.advance(timedelta(minutes=5))
        assert agent.runs == [] and agent.row("pump").next_run is None


async def test_short_every_jobs_show_their_times_to_the_second(tmp_path):
    """At minute precision a 30 s job's next and last runs read the same minute; its row says
    to show them to the second, and :func:`local_time` does."""
    from edge.core.localtime import local_time

    clock = ManualClock(datetime(2026, 11, 24, 6, 0, 10, tzinfo=UTC))
    jobs = [job("tick", every="30s", timezone="UTC"), job("ninety", every="90s", timezone="UTC"),
            job("hourly", every="1h", timezone="UTC"), job("water", cron="0 6 * * *", timezone="UTC")]
    async with Agent(tmp_path, clock, jobs) as agent:
        await clock.advance(timedelta(seconds=30))
        await until_ran(agent, "tick")
        rows = {row.name: row.as_json() for row in agent.scheduler.rows()}
    assert {name: row["to_the_second"] for name, row in rows.items()} == {
        "tick": True, "ninety": True, "hourly": False, "water": False}
    tick = rows["tick"]
    assert local_time(tick["last_run"], "UTC", tick["to_the_second"]) == "2026-11-24 06:00:40 UTC"
    assert local_time(tick["next_run"], "UTC", tick["to_the_second"]) == "2026-11-24 06:01:10 UTC"
    assert local_time(rows["water"]["next_run"], "UTC") == "2026-11-25 06:00 UTC"


async def until_ran(agent: Agent, name: str) -> None:
    for _ in range(200):
        if agent.ran(name):
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"{name} did not run")
