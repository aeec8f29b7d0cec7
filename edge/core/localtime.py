"""A moment shown in a zone, as people read a job's times: ``2026-11-25 06:00 CET``. Light (no
pydantic, no croniter; zoneinfo only once there is a time to word): ``edge-cli status`` and
``edge-cli schedules`` word a job's next run with the same function.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from datetime import datetime


def local_time(moment: datetime | str | None, zone: str, to_the_second: bool = False) -> str:
    """A time from the scheduler (an ISO string in a row's JSON, or a datetime) in the job's own
    zone, to the minute or to the second; as given when it cannot be read, ``-`` for none.

    >>> local_time("2026-11-25T05:00:30+00:00", "Europe/Berlin")
    '2026-11-25 06:00 CET'
    >>> local_time("2026-11-25T05:00:30+00:00", "Europe/Berlin", to_the_second=True)
    '2026-11-25 06:00:30 CET'
    """
    if moment is None:
        return "-"
    from datetime import datetime  # here: `status` with no job to word loads neither
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        when = (datetime.fromisoformat(moment) if isinstance(moment, str) else moment)
        when = when.astimezone(ZoneInfo(zone))
    except (ValueError, ZoneInfoNotFoundError):
        return str(moment)
    return when.strftime("%Y-%m-%d %H:%M:%S %Z" if to_the_second else "%Y-%m-%d %H:%M %Z")
