"""``[[schedules]]``: jobs that run an action at cron times, every interval, or once.

>>> job = ScheduleConfig(name="pump", cron="0 6 * * *", timezone="Europe/Berlin",
...                      action="gpio write pump on for 30s")
>>> job.kind, job.spec, job.timezone_name
('cron', 'cron 0 6 * * *', 'Europe/Berlin')
>>> parse_every("1h30m")
datetime.timedelta(seconds=5400)
>>> parse_every("1e-9")
Traceback (most recent call last):
...
ValueError: must be at least 1s (got '1e-9')
"""

from __future__ import annotations

import os
import re
from collections import Counter
from datetime import UTC, datetime, timedelta, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal, Self
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import AfterValidator, Field, ValidationError, model_validator

from edge.config.section import Section, check_name
from edge.core.durations import parse_duration
from edge.core.exc import UsageError

if TYPE_CHECKING:
    from edge.core.validation import Problem

_CRON_ALIASES = {"@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *",
                 "@weekly": "0 0 * * 0", "@daily": "0 0 * * *", "@midnight": "0 0 * * *",
                 "@hourly": "0 * * * *"}
_RANDOM_OR_HASHED = re.compile(r"(?<![A-Za-z])[HR](?![A-Za-z])", re.IGNORECASE)


MIN_EVERY = 1.0
"""The shortest ``every``, in seconds: a shorter interval is a typo, and a loop, not a schedule
(``1e-9`` is a zero ``timedelta``)."""


def parse_every(text: str) -> timedelta:
    """``every``: a duration as :func:`edge.core.durations.parse_duration` reads it, from
    :data:`MIN_EVERY` (1 s) to 10 years."""
    return timedelta(seconds=parse_duration(text, at_least=MIN_EVERY))


def _valid_every(text: str | None) -> str | None:
    if text is not None:
        parse_every(text)
    return text


def _valid_cron(expression: str | None) -> str | None:
    """Checked as the field (a problem is at ``schedules.N.cron``), not by the whole entry."""
    if expression is not None:
        cron_fields(expression)
    return expression


def cron_fields(expression: str) -> str:
    """The five fields of ``expression`` (``@daily`` and the other aliases expanded), validated;
    a ValueError carrying croniter's reason otherwise."""
    text = " ".join(expression.split())
    text = _CRON_ALIASES.get(text.lower(), text)
    if len(text.split()) != 5:
        raise ValueError(f"invalid cron expression {expression!r}: it needs five fields (minute hour "
                         "day-of-month month day-of-week), e.g. \"0 6 * * *\"")
    if _RANDOM_OR_HASHED.search(text):
        raise ValueError(f"invalid cron expression {expression!r}: the random (R) and hashed (H) "
                         "extensions are not supported; write the times out")
    # here, not at the top: croniter and dateutil add about 3 MB to every agent, cron jobs or not
    from croniter import CroniterBadDateError, CroniterError, croniter

    try:
        croniter(text, datetime(2000, 1, 1)).get_next(datetime)
    except CroniterBadDateError:
        raise ValueError(f"invalid cron expression {expression!r}: it matches no date (e.g. 30 February)") \
            from None
    except (CroniterError, ValueError) as exc:
        raise ValueError(f"invalid cron expression {expression!r}: {exc}") from None
    return text


def parse_at(text: str) -> datetime:
    """``"2026-12-01 06:00"`` (naive: local time in the job's zone) or ISO 8601, with an offset
    (``2026-12-01T06:00+01:00``, ``...Z``) or without."""
    try:
        return datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(f"at = {text!r} is not a time; write \"2026-12-01 06:00\" (local) or ISO 8601 "
                         "with an offset, \"2026-12-01T06:00:00+01:00\"") from None


def at_instant(moment: datetime, zone: tzinfo) -> datetime:
    """The UTC instant of an ``at`` time: as given when it has an offset, else the wall time in
    ``zone`` (see :func:`wall_instants`). A ValueError when that instant is outside the years
    datetimes reach (``9999-12-31 23:59`` in ``Etc/GMT+12`` is in the year 10000 in UTC).

    >>> at_instant(datetime(2026, 12, 1, 6, 0), ZoneInfo("Europe/Berlin")).isoformat()
    '2026-12-01T05:00:00+00:00'
    """
    try:
        if moment.tzinfo is not None:
            return moment.astimezone(UTC)
        return wall_instants(moment, zone)[0]
    except OverflowError:
        raise ValueError("it falls outside the years 1 to 9999 in UTC, which is as far as this agent "
                         "keeps time; give a time between them") from None


def wall_instants(wall: datetime, zone: tzinfo) -> list[datetime]:
    """The UTC instants at which the naive wall time ``wall`` occurs in ``zone``, earliest first:
    one; two in a repeated (fall-back) hour; for a time skipped by spring-forward, the first
    instant after the gap. OverflowError when one falls outside the years 1 to 9999.

    >>> [t.isoformat() for t in wall_instants(datetime(2026, 10, 25, 2, 30), ZoneInfo("Europe/Berlin"))]
    ['2026-10-25T00:30:00+00:00', '2026-10-25T01:30:00+00:00']
    >>> [t.isoformat() for t in wall_instants(datetime(2026, 3, 29, 2, 30), ZoneInfo("Europe/Berlin"))]
    ['2026-03-29T01:00:00+00:00']
    """
    offsets = {wall.replace(tzinfo=zone, fold=fold).utcoffset() or timedelta(0) for fold in (0, 1)}
    candidates = sorted((wall - offset).replace(tzinfo=UTC) for offset in offsets)
    real = [t for t in candidates if t.astimezone(zone).replace(tzinfo=None) == wall]
    return real or [_end_of_gap(candidates[0], candidates[-1], zone)]


def _end_of_gap(before: datetime, after: datetime, zone: tzinfo) -> datetime:
    """The first whole second, between ``before`` (old offset) and ``after`` (new offset), that has
    the new offset: the instant the wall clock jumped."""
    new_offset = after.astimezone(zone).utcoffset()
    while after - before > timedelta(seconds=1):
        middle = before + timedelta(seconds=int((after - before).total_seconds()) // 2)
        if middle.astimezone(zone).utcoffset() == new_offset:
            after = middle
        else:
            before = middle
    return after


def local_zone() -> tzinfo:
    """The system's zone: ``TZ``, else the zone ``/etc/localtime`` links to, else its contents, else UTC."""
    name = os.environ.get("TZ", "").lstrip(":")
    if name:
        try:
            return ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError):
            pass
    localtime = Path("/etc/localtime")
    try:
        target = str(localtime.resolve())
        if "zoneinfo/" in target:
            return ZoneInfo(target.split("zoneinfo/", 1)[1])
        with localtime.open("rb") as file:
            return ZoneInfo.from_file(file, key="localtime")
    except (OSError, ZoneInfoNotFoundError, ValueError):
        return ZoneInfo("UTC")


class ScheduleConfig(Section):
    """One ``[[schedules]]`` entry: exactly one of ``cron``, ``every`` or ``at``, and an action."""

    name: Annotated[str, AfterValidator(check_name)]
    """Letters, digits, ``_`` and ``-``; unique; the action runs as caller ``schedule:NAME``."""
    cron: Annotated[str | None, AfterValidator(_valid_cron)] = None
    """Five fields (minute hour day-of-month month day-of-week), in ``timezone``."""
    every: Annotated[str | None, AfterValidator(_valid_every)] = None
    """``"90s"``, ``"10m"``, ``"1h30m"``, ``"2d"`` (1 s to 10 years): real time from the last run
    (first: from when the job was first seen), unaffected by DST."""
    at: str | None = None
    """Once: ``"2026-12-01 06:00"`` (in ``timezone``) or ISO 8601 with an offset; checked in its
    zone, so a job that is accepted also starts."""
    timezone: str = ""
    """An IANA zone (``Europe/Berlin``); empty: the system's zone."""
    catch_up: Literal["skip", "once"] = "skip"
    """Fires missed while the agent was down: ``skip`` logs them, ``once`` runs the job once."""
    action: str = Field(min_length=1)
    enabled: bool = True

    @model_validator(mode="after")
    def check(self) -> Self:
        what = f"schedule {self.name!r}"
        given = [key for key in ("cron", "every", "at") if getattr(self, key) is not None]
        if len(given) != 1:
            raise ValueError(f"{what}: give exactly one of cron, every or at (got "
                             f"{', '.join(given) or 'none'})")
        if self.timezone:
            try:
                ZoneInfo(self.timezone)
            except (ZoneInfoNotFoundError, ValueError):
                raise ValueError(f"{what}: unknown timezone {self.timezone!r}; use an IANA name such "
                                 "as \"Europe/Berlin\" or \"UTC\"") from None
        try:
            if self.at is not None and self.cron is None:
                self._check_at(self.at)
        except ValueError as exc:
            raise ValueError(f"{what}: {exc}") from None
        return self

    def _check_at(self, text: str) -> None:
        moment = parse_at(text)
        try:
            at_instant(moment, self.zone())
        except ValueError as exc:
            where = "" if moment.tzinfo is not None else f" in {self.timezone_name}"
            raise ValueError(f"at = {text!r}{where}: {exc}") from None

    @classmethod
    def checked(cls, **fields: object) -> ScheduleConfig:
        """A job from chat or a tool: like the constructor, but a bad field is a UsageError whose
        message says which and why (``/schedule add`` shows it as is)."""
        from edge.core.validation import problems

        try:
            return cls.model_validate(fields)
        except ValidationError as exc:
            reasons = "; ".join(_reason(problem) for problem in problems(exc, cls))
            raise UsageError(reasons) from None

    @property
    def kind(self) -> Literal["cron", "every", "at"]:
        return "cron" if self.cron is not None else "every" if self.every is not None else "at"

    @property
    def spec(self) -> str:
        """``cron 0 6 * * *``, ``every 10m`` or ``at 2026-12-01 06:00``: how listings show the timing."""
        return f"{self.kind} {getattr(self, self.kind)}"

    @property
    def timezone_name(self) -> str:
        return self.timezone or str(getattr(local_zone(), "key", None) or "local")

    def zone(self) -> tzinfo:
        return ZoneInfo(self.timezone) if self.timezone else local_zone()


def _reason(problem: Problem) -> str:
    message = problem.message.replace("unknown key", "unknown field", 1) if problem.kind == "unknown" \
        else problem.message
    return f"{problem.where}: {message}" if problem.where else message


def duplicate_names(schedules: list[ScheduleConfig]) -> list[str]:
    counts = Counter(job.name for job in schedules)
    return sorted(name for name, count in counts.items() if count > 1)
