"""When a schedule fires: cron times in the job's zone, every interval, or once at a time.

Cron is evaluated by croniter on local wall times (naive, so croniter does plain calendar
arithmetic) and each wall time is then placed on the UTC line by
:func:`edge.config.schedules.wall_instants` (there, so that the config check places an ``at``
time exactly as the scheduler will), the way cron and systemd treat daylight saving:

- a wall time that does not exist (skipped by spring-forward) runs once, right after the gap:
  ``30 2 * * *`` in Europe/Berlin on 2026-03-29 runs at 03:00 CEST;
- a wall time that happens twice (fall-back) runs once, in its first pass, for a job that names
  its hours (``30 2 * * *``); a job whose hour field is ``*`` or ``*/N`` runs by the clock's hours
  and keeps its rhythm through the repeated hour (``0 * * * *`` runs at 02:00 CEST and 02:00 CET),
  as Vixie cron does for such jobs.

``every`` is real elapsed time (DST does not move it, at least 1 s), counted from the last
occurrence; ``at`` is one instant (a naive time is local in the job's zone, resolved like a cron
time).

>>> from edge.config.schedules import ScheduleConfig
>>> pump = Schedule(ScheduleConfig(name="pump", cron="30 2 * * *", timezone="Europe/Berlin", action="a"))
>>> pump.next_after(datetime(2026, 3, 28, 12, 0, tzinfo=UTC)).isoformat()
'2026-03-29T01:00:00+00:00'
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Literal

from edge.config.schedules import ScheduleConfig, at_instant, cron_fields, parse_at, parse_every, wall_instants

Source = Literal["config", "runtime"]

MAX_CRON_STEPS = 100_000
"""Candidate wall times examined per question; a five-field expression that validated never needs
more than a few hundred to answer one."""

MISSED_LIMIT = 1_000
TO_THE_SECOND_BELOW = 3600.0
"""An ``every`` job shorter than this (or not a whole number of minutes) has its times shown to
the second: at minute precision a 30 s job's next and last runs read the same minute."""


class Schedule:
    """A job's timing and action, from ``[[schedules]]`` (source ``config``) or added while the
    agent runs (source ``runtime``, with who added it)."""

    def __init__(self, config: ScheduleConfig, source: Source = "config", added_by: str = "") -> None:
        self.config, self.source, self.added_by = config, source, added_by
        self.zone = config.zone()
        self._cron = cron_fields(config.cron) if config.cron is not None else None
        self._every = parse_every(config.every) if config.every is not None else None
        self._at = at_instant(parse_at(config.at), self.zone) if config.at is not None else None
        self._fold_twice = self._cron is not None and self._cron.split()[1].startswith("*")

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def spec(self) -> str:
        return self.config.spec

    @property
    def to_the_second(self) -> bool:
        """Whether this job's times are shown to the second (:data:`TO_THE_SECOND_BELOW`):
        ``every 30s`` and ``every 90s`` are, ``every 1h`` and cron jobs (whole minutes) are not."""
        if self._every is None:
            return False
        seconds = self._every.total_seconds()
        return seconds < TO_THE_SECOND_BELOW or seconds % 60 != 0

    @property
    def is_once(self) -> bool:
        return self._at is not None

    def next_after(self, t: datetime) -> datetime | None:
        """The first occurrence strictly after ``t`` (aware), in UTC; None when there is none
        (an ``at`` job whose time has passed). For ``every``, ``t`` is the last occurrence."""
        t = t.astimezone(UTC)
        if self._every is not None:
            return t + self._every
        if self._at is not None:
            return self._at if self._at > t else None
        return self._next_cron(t)

    def missed(self, after: datetime, until: datetime) -> tuple[int, datetime | None]:
        """How many occurrences fall in (``after``, ``until``], and the latest of them. Counting
        stops at :data:`MISSED_LIMIT` (a per-minute job down for a day); the latest is still exact."""
        if self._every is not None:
            count = max(0, int((until - after) / self._every))
            return count, (after + count * self._every if count else None)
        count, latest, t = 0, None, after
        while count < MISSED_LIMIT and (following := self.next_after(t)) is not None and following <= until:
            count, latest, t = count + 1, following, following
        if count == MISSED_LIMIT:
            latest = self._latest_before(until) or latest
        return count, latest

    def _latest_before(self, until: datetime) -> datetime | None:
        for lookback in (timedelta(hours=1), timedelta(days=1), timedelta(days=32), timedelta(days=367)):
            latest, t = None, until - lookback
            while (following := self.next_after(t)) is not None and following <= until:
                latest, t = following, following
            if latest is not None:
                return latest
        return None

    def _next_cron(self, t: datetime) -> datetime | None:
        from croniter import croniter  # only agents with cron jobs pay for it (about 3 MB)

        assert self._cron is not None
        wall = t.astimezone(self.zone).replace(tzinfo=None)
        # in a repeated hour, earlier wall times still have a second pass after t
        start = wall - timedelta(hours=3) if len(wall_instants(wall, self.zone)) > 1 else wall
        times = croniter(self._cron, start)
        best: datetime | None = None
        for _ in range(MAX_CRON_STEPS):
            instants = wall_instants(times.get_next(datetime), self.zone)
            for instant in instants if self._fold_twice else instants[:1]:
                if instant > t and (best is None or instant < best):
                    best = instant
            if instants[0] > t:
                return best
        return best

    def __repr__(self) -> str:
        return f"Schedule({self.name!r}, {self.spec!r}, {self.source})"

