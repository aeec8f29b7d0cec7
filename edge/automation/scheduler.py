"""The run loop: sleep until the earliest next occurrence, fire what is due, record it first.

Each run is its own task, so a long job never delays the others; a job is never run twice at
once (an occurrence that comes while the previous run is still going is skipped and logged). A
failing job is logged and its error recorded; the loop goes on. A job whose next occurrence
cannot be worked out (a time past the year 9999) is disabled, logged as ``schedule_disabled``,
and listed with the reason; the other jobs go on. Saved runtime jobs this version refuses (an
``every`` below 1 s from an older one) are not loaded at all (see :mod:`.schedule_store`).

Missed occurrences, per job by ``catch_up``: ``skip`` logs ``schedule_missed name=... count=N``
and waits for the next one; ``once`` runs the job once, now, for all of them.

The wall clock can jump (a Pi without a real-time clock boots with the time it had at shutdown,
or 1970, and NTP steps it minutes later). What the loop does about it:

- It never sleeps more than its clock's ``step_check`` at a time (30 s,
  :data:`~edge.automation.clock.STEP_CHECK`) and re-reads the wall clock on waking, so a forward
  step is seen within 30 s and no occurrence is slept past.
- It tells time passing from a step with the monotonic clock: the agent has really been running
  since ``now - monotonic elapsed``. Occurrences after that, which a forward step jumped over,
  were due while it ran: the job runs once for all of them (no burst, no skipped run).
  Occurrences before it are downtime, whichever clock reading made them look recent, and go to
  ``catch_up``.
- At start, a clock earlier than the last save of the store is taken as not set yet: the loop
  waits for it (NTP) up to :data:`CLOCK_WAIT`, then believes it.
- A backward step leaves the recorded occurrences in the future. Up to
  :data:`STEP_BACK_TOLERANCE` the jobs simply wait (nothing runs twice); beyond it the earlier
  clock was wrong, and jobs that fired under it count from now, so they do not fall silent for
  the length of the step.

A deployment that can should still start the agent after ``time-sync.target``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from typing import Any

from edge.automation.clock import Clock, SystemClock
from edge.automation.schedule import MISSED_LIMIT, Schedule, Source
from edge.automation.schedule_store import JobState, RuntimeJob, ScheduleStore
from edge.config.schedules import ScheduleConfig
from edge.core.exc import UsageError

log = logging.getLogger(__name__)

RunJob = Callable[[Schedule, datetime], Awaitable[str | None]]
"""Runs a job's action for one occurrence; returns a result to record (None: ``ok``) or raises."""

STEP_BACK_TOLERANCE = timedelta(minutes=5)
CLOCK_WAIT = timedelta(minutes=10)
CLOCK_FLOOR = datetime.fromisoformat("2025-01-01T00:00:00+00:00")
"""Earlier than this, the clock is not set (1970 on a Pi without a real-time clock)."""
SLACK = timedelta(seconds=1)
MIN_SLEEP = timedelta(milliseconds=50)


@dataclass(frozen=True)
class ScheduleRow:
    """One line of ``/schedule list`` and ``edge-cli schedules``."""

    name: str
    spec: str
    timezone: str
    next_run: datetime | None
    last_run: datetime | None
    last_result: str
    source: str
    added_by: str
    enabled: bool
    action: str
    catch_up: str
    running: bool
    disabled_reason: str = ""
    """Why the scheduler disabled the job (its next run could not be worked out); empty if not."""
    to_the_second: bool = False
    """Show its times to the second (a short ``every``: :func:`.schedule.local_time`)."""

    def as_json(self) -> dict[str, Any]:
        return {**asdict(self), "next_run": _text(self.next_run), "last_run": _text(self.last_run)}


class Scheduler:
    """Runs ``[[schedules]]`` and runtime-added jobs through ``run``; see the module docstring.

    ``await scheduler.run()`` until cancelled; ``add``, ``remove`` and ``rows`` work whether or
    not it is running."""

    def __init__(self, schedules: Iterable[ScheduleConfig | Schedule], store: ScheduleStore, run: RunJob,
                 clock: Clock | None = None) -> None:
        self.store, self._run, self.clock = store, run, clock or SystemClock()
        self._jobs: dict[str, Schedule] = {}
        self._disabled: dict[str, str] = {}
        for item in schedules:
            job = item if isinstance(item, Schedule) else _schedule(item, "config")
            if job is not None:
                self._jobs[job.name] = job
        for runtime in store.runtime_jobs():
            if runtime.config.name in self._jobs:
                log.warning("schedule_runtime_shadowed name=%s by=config (a [[schedules]] entry took its "
                            "name; the runtime job is kept in the store but not run)", runtime.config.name)
                continue
            job = _schedule(runtime.config, "runtime", runtime.added_by)
            if job is not None:
                self._jobs[job.name] = job
        self._due: dict[str, datetime | None] = {}
        self._running: dict[str, asyncio.Task[None]] = {}
        self._anchored_here: set[str] = set()
        self._woken = asyncio.Event()
        self._started_mono: float | None = None
        now = self.clock.now()
        for job in self._jobs.values():
            self._due[job.name] = self._next(job, store.state(job.name).anchor or now)

    # the loop

    async def run(self) -> None:
        """Run until cancelled; cancelling also cancels the actions still running (their result
        is recorded as cancelled; the hardware's own auto-off and safe states still apply)."""
        await self._wait_for_clock()
        self._start(self.clock.now())
        try:
            while True:
                now = self.clock.now()
                self._tick(now)
                until = min([due for due in self._due.values() if due is not None] + [now + self.clock.step_check])
                await self._sleep_until(max(until, now + MIN_SLEEP))  # never a busy loop
        finally:
            running = [task for task in self._running.values() if not task.done()]
            for task in running:
                task.cancel()
            await asyncio.gather(*running, return_exceptions=True)

    def wake(self) -> None:
        """Re-read the jobs now (the loop otherwise wakes at the next occurrence or in 30 s)."""
        self._woken.set()

    async def _sleep_until(self, until: datetime) -> None:
        self._woken.clear()
        sleeper = asyncio.ensure_future(self.clock.sleep_until(until))
        waker = asyncio.ensure_future(self._woken.wait())
        try:
            await asyncio.wait({sleeper, waker}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            sleeper.cancel()
            waker.cancel()

    async def _wait_for_clock(self) -> None:
        floor = max(CLOCK_FLOOR, self.store.saved_at or CLOCK_FLOOR)
        if self.clock.now() >= floor - SLACK:
            return
        log.warning("schedule_clock_behind now=%s expected_after=%s (waiting up to %ds for the clock to be "
                    "set, e.g. by NTP)", _text(self.clock.now()), _text(floor), CLOCK_WAIT.total_seconds())
        waited_from = self.clock.monotonic()
        while self.clock.now() < floor - SLACK:
            if self.clock.monotonic() - waited_from >= CLOCK_WAIT.total_seconds():
                log.warning("schedule_clock_accepted now=%s (jobs recorded later count from now)",
                            _text(self.clock.now()))
                self._anchored_here.update(self._jobs)
                return
            await self._sleep_until(self.clock.now() + self.clock.step_check)
        log.info("schedule_clock_set now=%s", _text(self.clock.now()))

    def _start(self, now: datetime) -> None:
        self._started_mono = self.clock.monotonic()
        self.store.keep_only(set(self._jobs) | {job.config.name for job in self.store.runtime_jobs()})
        for job in self._jobs.values():
            state = self.store.state(job.name)
            if state.anchor is None or not job.config.enabled:
                # first seen (or disabled): occurrences count from now, nothing was missed
                state.anchor = max(now, state.anchor or now)
                self._anchored_here.add(job.name)
                if job.is_once and job.next_after(now) is None and not state.done:
                    log.info("schedule_expired name=%s spec=%r (its time passed before it was first seen)",
                             job.name, job.spec)
            self._due[job.name] = self._next(job, state.anchor)
            state.done = job.is_once and job.next_after(state.anchor) is None  # an at moved later runs again
        self._persist(now)
        log.info("schedule_started jobs=%d next=%s", len(self._jobs), _text(self._earliest()))

    def _tick(self, now: datetime) -> None:
        assert self._started_mono is not None
        running_since = now - timedelta(seconds=self.clock.monotonic() - self._started_mono) - SLACK
        changed = False
        for job in list(self._jobs.values()):
            try:
                changed = self._tick_job(job, now, running_since) or changed
            except Exception as exc:  # one job's bad arithmetic never ends the loop for the others
                self._disable(job, exc)
                changed = True
        if changed:
            # one write for all that fired, before any of their tasks starts (no await in between):
            # a restart never runs these occurrences again
            self._persist(now)

    def _tick_job(self, job: Schedule, now: datetime, running_since: datetime) -> bool:
        """Handle ``job`` at ``now``: fire it, skip it or log it missed; True when its state changed."""
        changed = False
        state = self.store.state(job.name)
        if job.name in self._anchored_here and not state.done and state.anchor is not None \
                and state.anchor > now + STEP_BACK_TOLERANCE:
            log.warning("schedule_clock_stepped_back name=%s by=%ds (counting from now)", job.name,
                        (state.anchor - now).total_seconds())
            state.anchor, changed = now, True
            self._due[job.name] = self._next(job, now)
        due = self._due.get(job.name)
        if due is None or due > now or state.anchor is None:
            return changed
        count, latest = job.missed(state.anchor, now)
        if latest is None:
            return changed
        changed = True
        if self._is_running(job.name):
            log.warning("schedule_overlap name=%s at=%s (still running; this run is skipped)", job.name,
                        _text(latest))
            self._advance(job, state, latest)
        elif latest >= running_since:
            if count > 1:
                log.warning("schedule_coalesced name=%s count=%d (the clock jumped, or the loop stalled; one run)",
                            job.name, count)
            self._fire(job, state, latest, now)
        elif job.config.catch_up == "once":
            log.info("schedule_catch_up name=%s count=%s last=%s", job.name, _count(count), _text(latest))
            self._fire(job, state, latest, now)
        else:
            log.info("schedule_missed name=%s count=%s last=%s", job.name, _count(count), _text(latest))
            self._advance(job, state, latest)
        return changed

    def _advance(self, job: Schedule, state: JobState, occurrence: datetime) -> None:
        state.anchor = occurrence
        state.done = state.done or job.is_once
        self._anchored_here.add(job.name)
        self._due[job.name] = self._next(job, occurrence)

    def _fire(self, job: Schedule, state: JobState, occurrence: datetime, now: datetime) -> None:
        self._advance(job, state, occurrence)
        state.last_run, state.started_at, state.last_result = occurrence, now, "running"
        log.info("schedule_fired name=%s at=%s late=%.1fs", job.name, _text(occurrence),
                 (now - occurrence).total_seconds())
        self._running[job.name] = asyncio.create_task(self._run_one(job, state, occurrence),
                                                      name=f"schedule:{job.name}")

    async def _run_one(self, job: Schedule, state: JobState, occurrence: datetime) -> None:
        try:
            result = await self._run(job, occurrence)
            state.last_result = "ok" if result is None else str(result)
            log.info("schedule_done name=%s at=%s result=%r", job.name, _text(occurrence), state.last_result)
        except asyncio.CancelledError:
            state.last_result = "cancelled: the agent stopped during the run"
            raise
        except Exception as exc:
            state.last_result = f"error: {exc}" if str(exc) else f"error: {type(exc).__name__}"
            log.error("schedule_failed name=%s at=%s error=%r", job.name, _text(occurrence), str(exc) or exc)
        finally:
            self._persist(self.clock.now())

    # jobs

    def add(self, config: ScheduleConfig, added_by: str) -> Schedule:
        """Add a job at runtime (chat ``/schedule add``, the model's tool), kept in the store.
        Raises UsageError when the name is taken or an ``at`` time has passed."""
        existing = self._jobs.get(config.name)
        if existing is not None:
            where = ("is in the config file ([[schedules]])" if existing.source == "config"
                     else f"was added by {existing.added_by or 'someone'}")
            raise UsageError(f"schedule {config.name!r} already exists (it {where}); choose another name"
                             + ("" if existing.source == "config" else " or remove it first"))
        now = self.clock.now()
        try:
            job = Schedule(config, "runtime", added_by)
            following = job.next_after(now)
        except (ValueError, ArithmeticError) as exc:
            raise UsageError(f"schedule {config.name!r}: its next run cannot be worked out ({exc}); "
                             "check its timing") from None
        if following is None:
            raise UsageError(f"schedule {config.name!r}: {config.spec} has already passed; give a later time")
        self.store.add_runtime(RuntimeJob(config, added_by, now))
        state = self.store.reset(job.name)
        state.anchor = now
        self._jobs[job.name] = job
        self._anchored_here.add(job.name)
        self._due[job.name] = self._next(job, now)
        self._persist(now)
        log.info("schedule_added name=%s spec=%r by=%s next=%s", job.name, job.spec, added_by,
                 _text(self._due[job.name]))
        self.wake()
        return job

    def remove(self, name: str, by: str = "") -> None:
        """Remove a runtime job (a run in progress finishes). Config jobs are removed in config."""
        job = self._jobs.get(name)
        if job is None:
            raise UsageError(f"no schedule named {name!r}; known: {', '.join(self._jobs) or 'none'}")
        if job.source == "config":
            raise UsageError(f"schedule {name!r} is in the config file ([[schedules]]); remove it there or "
                             "set enabled = false")
        self.store.remove_runtime(name)
        del self._jobs[name]
        self._due.pop(name, None)
        self._disabled.pop(name, None)
        self._anchored_here.discard(name)
        self._persist(self.clock.now())
        log.info("schedule_removed name=%s by=%s", name, by)
        self.wake()

    def get(self, name: str) -> Schedule | None:
        return self._jobs.get(name)

    def rows(self) -> list[ScheduleRow]:
        rows = []
        for job in self._jobs.values():
            state = self.store.state(job.name)
            rows.append(ScheduleRow(
                name=job.name, spec=job.spec, timezone=job.config.timezone_name,
                next_run=self._due.get(job.name) if job.config.enabled else None, last_run=state.last_run,
                last_result=state.last_result, source=job.source, added_by=job.added_by,
                enabled=job.config.enabled and job.name not in self._disabled, action=job.config.action,
                catch_up=job.config.catch_up, running=self._is_running(job.name),
                disabled_reason=self._disabled.get(job.name, ""), to_the_second=job.to_the_second))
        return rows

    # helpers

    def _next(self, job: Schedule, after: datetime) -> datetime | None:
        """The job's next occurrence after ``after``; None when it is disabled, by config or
        here, when that cannot be worked out (see :meth:`_disable`)."""
        if not job.config.enabled or job.name in self._disabled:
            return None
        try:
            return job.next_after(after)
        except Exception as exc:  # an overflow past the year 9999, a croniter surprise: this job only
            self._disable(job, exc)
            return None

    def _disable(self, job: Schedule, error: BaseException) -> None:
        """Stop scheduling ``job`` (until the agent restarts): logged, and listed with the reason."""
        reason = f"its next run cannot be worked out ({type(error).__name__}: {error})"
        if job.name not in self._disabled:
            log.error("schedule_disabled name=%s spec=%r error=%r (the other jobs go on; fix or remove "
                      "it)", job.name, job.spec, f"{type(error).__name__}: {error}")
        self._disabled[job.name] = reason
        self._due[job.name] = None

    def _earliest(self) -> datetime | None:
        return min((due for due in self._due.values() if due is not None), default=None)

    def _is_running(self, name: str) -> bool:
        task = self._running.get(name)
        return task is not None and not task.done()

    def _persist(self, now: datetime) -> None:
        try:
            self.store.save(now)
        except OSError as exc:
            log.error("schedule_store_write_failed path=%s error=%r (runs go on; after a crash one could "
                      "repeat)", self.store.path, str(exc))


def _schedule(config: ScheduleConfig, source: Source, added_by: str = "") -> Schedule | None:
    """The job ``config`` describes; None, logged, when its timing cannot be worked out (what the
    config check accepts always can: this guards the loop, not the check)."""
    try:
        return Schedule(config, source, added_by)
    except (ValueError, ArithmeticError) as exc:
        log.error("schedule_refused name=%s source=%s spec=%r error=%r (not run; the other jobs go on)",
                  config.name, source, config.spec, str(exc))
        return None


def _text(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment is not None else None


def _count(count: int) -> str:
    return f"{count}+" if count >= MISSED_LIMIT else str(count)
