"""What the scheduler remembers across restarts, in ``<state>/schedules.json``.

Per job: ``anchor`` (every occurrence up to it is handled: run, skipped or logged as missed; the
next one is the schedule's first after it), the occurrence last run and when it started, its
result (``ok`` or the error), and ``done`` for an ``at`` job. The anchor is written *before* the
action starts, so a crash or a restart in the middle never runs the same occurrence twice.

Jobs added while the agent runs (chat ``/schedule add``, the model's tool) live here too, with
who added them; ``[[schedules]]`` stay in the config file. A saved job this version refuses
(written by an older one, or by hand: ``every = "1e-9"``) is logged as
``schedule_store_job_unreadable``, kept in the file and not run; the others load. A file that
cannot be read is moved aside (``schedules.json.corrupt-<time>``) with a warning and the
scheduler starts afresh.

>>> import tempfile, pathlib
>>> store = ScheduleStore.open(pathlib.Path(tempfile.mkdtemp()) / "schedules.json")
>>> store.state("pump").anchor is None, store.runtime_jobs()
(True, [])
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from edge.config.schedules import ScheduleConfig
from edge.core.files import write_json_atomically

log = logging.getLogger(__name__)

VERSION = 1


@dataclass
class JobState:
    anchor: datetime | None = None
    last_run: datetime | None = None
    """The occurrence last run (its scheduled time)."""
    started_at: datetime | None = None
    """The wall time that run started."""
    last_result: str = ""
    done: bool = False

    def as_json(self) -> dict[str, Any]:
        return {"anchor": _text(self.anchor), "last_run": _text(self.last_run),
                "started_at": _text(self.started_at), "last_result": self.last_result, "done": self.done}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> JobState:
        if not isinstance(data, dict):
            raise ValueError(f"a job's state is {type(data).__name__}, not an object")
        return cls(anchor=_time(data.get("anchor")), last_run=_time(data.get("last_run")),
                   started_at=_time(data.get("started_at")), last_result=str(data.get("last_result", "")),
                   done=bool(data.get("done", False)))


@dataclass(frozen=True)
class RuntimeJob:
    config: ScheduleConfig
    added_by: str
    added_at: datetime

    def as_json(self) -> dict[str, Any]:
        return {"config": self.config.model_dump(exclude_defaults=True), "added_by": self.added_by,
                "added_at": _text(self.added_at)}


class ScheduleStore:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.saved_at: datetime | None = None
        """The wall time of the last save before this start: the clock has been at least there."""
        self._jobs: dict[str, JobState] = {}
        self._runtime: dict[str, RuntimeJob] = {}
        self._unreadable: list[Any] = []
        """Runtime jobs this version cannot load (kept in the file, not run)."""

    @classmethod
    def open(cls, path: Path) -> ScheduleStore:
        store = cls(path)
        try:
            text = store.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return store
        try:
            store._load(json.loads(text))
        except (ValueError, TypeError, AttributeError) as exc:
            store._move_aside(exc)
        return store

    @classmethod
    def peek(cls, state_dir: Path) -> ScheduleStore | None:
        """The store in ``state_dir`` as it is, read only (a corrupt file is left where it is):
        what a command checks its input against before it asks the agent. None when it cannot
        be read or is not a store this version reads."""
        store = cls(Path(state_dir) / "schedules.json")
        try:
            store._load(json.loads(store.path.read_text(encoding="utf-8")))
        except FileNotFoundError:
            return store
        except (OSError, ValueError, TypeError, AttributeError):
            return None
        return store

    @classmethod
    def in_state_dir(cls, state_dir: Path) -> ScheduleStore:
        return cls.open(Path(state_dir) / "schedules.json")

    def _load(self, data: Any) -> None:
        if not isinstance(data, dict) or data.get("version") != VERSION:
            raise ValueError(f"not a version {VERSION} schedule store")
        self.saved_at = _time(data.get("saved_at"))
        self._jobs = {str(name): JobState.from_json(state) for name, state in data.get("jobs", {}).items()}
        for entry in data.get("runtime", []):
            try:
                job = RuntimeJob(ScheduleConfig.model_validate(entry["config"]), str(entry.get("added_by", "")),
                                 _time(entry.get("added_at")) or datetime.now(UTC))
            except (ValueError, KeyError, TypeError, AttributeError) as exc:
                # a job an older version accepted (``every = "1e-9"``) is refused here, not run
                from edge.core.validation import problems

                error = "; ".join(map(str, problems(exc, ScheduleConfig))) \
                    if isinstance(exc, ValidationError) else str(exc)
                log.warning("schedule_store_job_unreadable path=%s entry=%r error=%r (kept in the file, "
                            "not run; add it again with a valid timing)", self.path, entry,
                            error.splitlines()[0])
                self._unreadable.append(entry)
                continue
            self._runtime[job.config.name] = job

    def _move_aside(self, error: Exception) -> None:
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
        aside = self.path.with_name(f"{self.path.name}.corrupt-{stamp}")
        try:
            self.path.rename(aside)
        except OSError as exc:
            log.warning("schedule_store_corrupt path=%s error=%r moved_to=none rename_error=%r",
                        self.path, str(error), str(exc))
        else:
            log.warning("schedule_store_corrupt path=%s error=%r moved_to=%s (last runs and runtime "
                        "jobs start afresh; the old file is kept there)", self.path, str(error), aside)
        self._jobs, self._runtime, self._unreadable, self.saved_at = {}, {}, [], None

    def state(self, name: str) -> JobState:
        return self._jobs.setdefault(name, JobState())

    def reset(self, name: str) -> JobState:
        """A fresh state for ``name`` (a job added at runtime under a name used before)."""
        self._jobs[name] = JobState()
        return self._jobs[name]

    def keep_only(self, names: set[str]) -> None:
        """Forget the state of jobs that no longer exist (removed from config, renamed)."""
        for name in set(self._jobs) - names:
            del self._jobs[name]

    def runtime_jobs(self) -> list[RuntimeJob]:
        return list(self._runtime.values())

    def add_runtime(self, job: RuntimeJob) -> None:
        self._runtime[job.config.name] = job

    def remove_runtime(self, name: str) -> bool:
        self._jobs.pop(name, None)
        return self._runtime.pop(name, None) is not None

    def save(self, now: datetime) -> None:
        """Write the file atomically (small; kept on the loop, as the other state files are)."""
        data = {"version": VERSION, "saved_at": _text(now),
                "jobs": {name: state.as_json() for name, state in sorted(self._jobs.items())},
                "runtime": [job.as_json() for job in self._runtime.values()] + self._unreadable}
        write_json_atomically(self.path, data)


def _text(moment: datetime | None) -> str | None:
    return moment.astimezone(UTC).isoformat() if moment is not None else None


def _time(value: Any) -> datetime | None:
    if value is None:
        return None
    moment = datetime.fromisoformat(str(value))
    if moment.tzinfo is None:
        raise ValueError(f"time {value!r} has no offset")
    return moment.astimezone(UTC)
