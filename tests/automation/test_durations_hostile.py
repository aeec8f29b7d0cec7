"""Hostile durations cannot stop the scheduler: ``every = "1e-9"`` (a zero interval), ``inf``,
``nan``, ``1e300`` and ``99999999999d`` are refused at every door (chat's ``/schedule add``, the
model's ``schedule_add``, ``edge-cli schedules add --every``) in words that name the key; a bad
job saved by an older version is refused at start while the config's jobs run; a job whose next
run cannot be worked out is disabled alone; and ``for inf`` never holds a pin forever."""

from __future__ import annotations

import asyncio
import json
import logging
from datetime import UTC, datetime, timedelta

import pytest

from edge.agent.commands import CommandContext, run_command
from edge.automation.actions import parse_action
from edge.automation.assembly import Automation
from edge.automation.clock import ManualClock
from edge.automation.schedule import Schedule
from edge.automation.schedule_store import ScheduleStore
from edge.automation.scheduler import Scheduler
from edge.config.loader import load_config
from edge.config.schedules import ScheduleConfig
from edge.core.requester import Requester
from edge.hardware import build_hardware
from edge.security.approvals import ApprovalGate
from edge.tools.automation import automation_tools, format_schedules
from tests.helpers import cli

HOSTILE = ["1e-9", "0.0000001s", "inf", "nan", "1e300", "99999999999d"]
"""Intervals that once passed every check and then stopped the scheduler (a zero ``timedelta``)
or raised an OverflowError; ``nan`` stays refused with them."""
WHY = {"1e-9": "must be at least 1s", "0.0000001s": "must be at least 1s",
       "inf": "must be a finite duration, at most 3650d, 10 years",
       "nan": "must be a finite duration, at most 3650d, 10 years",
       "1e300": "must be at most 3650d, 10 years", "99999999999d": "must be at most 3650d, 10 years"}
ADMIN = Requester("telegram", "42", "42")
CONFIG = """
[channels.telegram]
bot_token = "1:x"
allowed_users = ["42"]
admins = ["42"]
"""


@pytest.fixture
def automation(tmp_path, write_config, isolated_env, mock_factory):
    cfg = load_config(str(write_config(CONFIG)), env=isolated_env).config
    gate = ApprovalGate.from_config(cfg.security, {"telegram": frozenset({"42"})})
    hardware = build_hardware(cfg, resident=True, pin_factory=mock_factory, approvals=gate)
    auto = Automation(cfg, hardware, pin_factory=mock_factory, state_dir=tmp_path)
    return {t.name: t for t in automation_tools(auto, gate)}, auto


def added(auto: Automation) -> list[str]:
    return [row["name"] for row in auto.schedule_rows()]


async def test_the_schedule_add_tool_refuses_hostile_intervals_naming_every(automation):
    tools, auto = automation
    for every in HOSTILE:
        result = await tools["schedule_add"].execute(
            {"name": "tick", "every": every, "action": "notify hi"}, ADMIN)
        assert not result.success, f"every = {every!r} was accepted"
        assert result.error == f"every: {WHY[every]} (got {every!r})", result.error
    assert added(auto) == []


async def test_chat_schedule_add_refuses_hostile_intervals(automation):
    tools, auto = automation
    ctx = CommandContext(tools, None, ADMIN, admins={"telegram": frozenset({"42"})})
    for every in HOSTILE:
        reply = await run_command(f"/schedule add tick every {every} notify hi", ctx)
        assert reply == f"Error: every: {WHY[every]} (got {every!r})", reply
    assert added(auto) == []
    reply = await run_command("/schedule add tick every 1s notify hi", ctx)
    assert reply.startswith("added: tick: every 1s"), reply


def test_edge_cli_schedules_add_refuses_hostile_intervals_with_exit_2(isolated_env):
    for every in ["1e-9", "inf", "nan", "1e300", "99999999999d"]:
        result = cli("schedules", "add", "tick", "--every", every, "notify", "hi", env=isolated_env)
        assert result.returncode == 2, (every, result.returncode, result.stdout, result.stderr)
        assert f"argument --every: {WHY[every]} (got {every!r})" in result.stderr, result.stderr
        assert "Traceback" not in result.stderr


async def test_for_inf_on_a_pin_without_max_on_seconds_is_refused(automation):
    tools, auto = automation
    assert auto.hardware.pins[auto.hardware.locate("led")].max_on_seconds is None
    for hold in ["inf", "nan", "1e300", "99999999999d"]:
        result = await tools["schedule_add"].execute(
            {"name": "glow", "every": "1h", "action": f"gpio write led on for {hold}"}, ADMIN)
        assert not result.success, f"for {hold} was accepted"
        assert "'for':" in result.error and WHY[hold] in result.error, result.error
    assert added(auto) == []
    with pytest.raises(ValueError, match=r"'gpio pwm led 0\.5 for inf': 'for': must be a finite duration"):
        parse_action("gpio pwm led 0.5 for inf")


# the scheduler itself -----------------------------------------------------------------------------

START = datetime(2026, 6, 1, 6, 0, tzinfo=UTC)


def probe() -> ScheduleConfig:
    return ScheduleConfig(name="probe", every="10m", action="sensor read greenhouse")


class Loop:
    """A scheduler over the store at ``path``, running on a manual clock, recording what it ran."""

    def __init__(self, path, schedules, clock: ManualClock):
        self.clock, self.runs = clock, list[str]()
        self.scheduler = Scheduler(schedules, ScheduleStore.open(path), self.record, clock)
        self.task: asyncio.Task[None] | None = None

    async def record(self, job: Schedule, when: datetime) -> None:
        self.runs.append(f"{job.name} {when:%H:%M}")

    async def __aenter__(self) -> Loop:
        self.task = asyncio.create_task(self.scheduler.run())
        await self.clock.settle()
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self.task is not None
        self.task.cancel()
        await asyncio.gather(self.task, return_exceptions=True)


async def test_bad_saved_runtime_jobs_are_refused_and_the_config_jobs_run(tmp_path, caplog):
    path = tmp_path / "schedules.json"
    saved = [{"config": {"name": f"old{i}", "every": every, "action": "notify hi"}, "added_by": "telegram:42",
              "added_at": "2026-05-01T00:00:00+00:00"} for i, every in enumerate(HOSTILE)]
    path.write_text(json.dumps({"version": 1, "saved_at": "2026-05-31T00:00:00+00:00", "jobs": {},
                                "runtime": saved}))
    clock = ManualClock(START)
    with caplog.at_level(logging.WARNING):
        async with Loop(path, [probe()], clock) as loop:
            await clock.advance(timedelta(minutes=25))
            assert loop.task is not None and not loop.task.done(), loop.task.result()
            assert loop.runs == ["probe 06:10", "probe 06:20"]
            assert [row.name for row in loop.scheduler.rows()] == ["probe"]
    assert caplog.text.count("schedule_store_job_unreadable") == len(HOSTILE)
    assert "every: must be at least 1s (got '1e-9')" in caplog.text
    assert json.loads(path.read_text())["runtime"] == saved  # kept for a person to look at


async def test_a_job_whose_next_run_overflows_is_disabled_alone(tmp_path, caplog):
    """A stored anchor at the end of the calendar (a clock once set to 9999): the job's next run
    cannot be worked out; it is disabled with the reason, and the other job runs."""
    path = tmp_path / "schedules.json"
    path.write_text(json.dumps({"version": 1, "saved_at": "2026-05-31T00:00:00+00:00", "runtime": [],
                                "jobs": {"yearly": {"anchor": "9999-12-31T00:00:00+00:00"}}}))
    yearly = ScheduleConfig(name="yearly", every="2d", action="notify hi")
    clock = ManualClock(START)
    with caplog.at_level(logging.ERROR):
        async with Loop(path, [yearly, probe()], clock) as loop:
            await clock.advance(timedelta(minutes=15))
            assert loop.runs == ["probe 06:10"]
            row = next(row for row in loop.scheduler.rows() if row.name == "yearly")
            assert (row.enabled, row.next_run) == (False, None)
            assert row.disabled_reason.startswith("its next run cannot be worked out (OverflowError")
    assert "schedule_disabled name=yearly" in caplog.text


class Undividable(Schedule):
    """A job whose arithmetic fails when it comes due, as a zero ``every`` once did."""

    def missed(self, after: datetime, until: datetime) -> tuple[int, datetime | None]:
        raise ZeroDivisionError("timedelta division by zero")


async def test_a_job_that_fails_at_its_tick_never_ends_the_loop(tmp_path, caplog):
    broken = Undividable(ScheduleConfig(name="broken", every="5m", action="notify hi"))
    clock = ManualClock(START)
    with caplog.at_level(logging.ERROR):
        async with Loop(tmp_path / "schedules.json", [broken, probe()], clock) as loop:
            await clock.advance(timedelta(minutes=25))
            assert loop.task is not None and not loop.task.done()
            assert loop.runs == ["probe 06:10", "probe 06:20"]
            row = loop.scheduler.rows()[0]
            assert (row.name, row.enabled, row.next_run) == ("broken", False, None)
            assert "ZeroDivisionError" in row.disabled_reason
    assert caplog.text.count("schedule_disabled name=broken") == 1
    listing = format_schedules([row.as_json() for row in loop.scheduler.rows()])
    assert "broken (disabled: its next run cannot be worked out (ZeroDivisionError" in listing
