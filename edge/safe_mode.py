"""A crash loop's brake: the ledger of runs and the safe mode it decides.

Each start of the agent appends a run to ``<state>/runs.json`` marked ``running``; the normal exit
path of :meth:`edge.runtime.Runtime.run` (a stop signal, end of piped input) marks it ``clean``,
and an exception that escapes it marks it ``crashed`` with the error. A run still ``running`` at
the next start ended without a word: a SIGKILL, the OOM killer, a watchdog, a power cut. When
:data:`ABNORMAL_ENDS` such ends fall within :data:`WINDOW_SECONDS`, the start is in safe mode: the
boards are claimed at their safe levels as always, but rules and schedules do not run and model
turns are refused, so a rule cannot switch a relay at every restart of the loop. ``edge-cli
resume`` or an admin's ``/resume`` leaves it and forgives the ends counted so far.

Under systemd, ``ExecStopPost=edge-cli safe-state`` writes how the unit saw the end into the open
run (``service_result=oom-kill, ...``): status then says the last end in words, "killed for
memory (oom-kill)" when the kernel's OOM killer ended it at the unit's ``MemoryMax=``
(:meth:`RunLedger.last_end`, :func:`describe_end`).

>>> import tempfile, pathlib
>>> ledger = RunLedger(pathlib.Path(tempfile.mkdtemp()) / "runs.json")
>>> for t in (0, 60, 120):
...     _ = ledger.begin(pid=1, now=t)  # each run killed: never marked clean
>>> ledger.begin(pid=1, now=180).ends
3
>>> ledger.forgive(now=181); ledger.begin(pid=1, now=182) is None
True
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from edge.core.files import write_json_atomically

log = logging.getLogger(__name__)

LEDGER_NAME = "runs.json"
ABNORMAL_ENDS = 3
WINDOW_SECONDS = 600.0
RUNS_KEPT = 20
SILENT_END = "killed or crashed without a word (no clean stop recorded)"
OOM_KILL = "service_result=oom-kill"
"""What ``ExecStopPost=`` hears from systemd when the OOM killer ended the agent."""
KILLED_FOR_MEMORY = "killed for memory (oom-kill)"


def describe_end(error: str) -> str:
    """An end's reason as a person reads it.

    >>> describe_end("service_result=oom-kill, exit_code=killed, exit_status=KILL")
    'killed for memory (oom-kill)'
    >>> describe_end("RuntimeError: boom")
    'RuntimeError: boom'
    """
    return KILLED_FOR_MEMORY if OOM_KILL in error else error


@dataclass(frozen=True)
class LastEnd:
    """How the agent's previous run ended, when it did not stop cleanly."""

    at: float
    """When it ended, or when the next start found it ended (epoch seconds)."""
    reason: str

    @property
    def killed_for_memory(self) -> bool:
        return self.reason == KILLED_FOR_MEMORY

    def as_dict(self) -> dict[str, Any]:
        return {"at": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(self.at)),
                "reason": self.reason, "killed_for_memory": self.killed_for_memory}


@dataclass(frozen=True)
class SafeModeCause:
    """Why a start is in safe mode: ``ends`` abnormal ends in the window, the last one's reason."""

    since: float
    ends: int
    reason: str

    def as_dict(self) -> dict[str, Any]:
        return {"since": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(self.since)),
                "ends": self.ends, "reason": self.reason}

    def refusal(self) -> str:
        return (f"The agent is in safe mode after {self.ends} abnormal ends in "
                f"{WINDOW_SECONDS / 60:g} minutes (last: {self.reason}); rules and schedules are "
                "stopped and I do not ask the model. An admin can send /resume, or run "
                "`edge-cli resume`.")


class RunLedger:
    """The runs of the agent in one state directory (``runs.json``, mode 0600)."""

    def __init__(self, path: Path):
        self.path = path
        self._run: float | None = None
        """This process's run, by its start time, once :meth:`begin` recorded it."""

    @classmethod
    def in_state_dir(cls, state_dir: Path) -> RunLedger:
        return cls(state_dir / LEDGER_NAME)

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text())
        except (OSError, ValueError):
            return {"runs": [], "forgiven_until": 0.0}
        return data if isinstance(data, dict) and isinstance(data.get("runs"), list) else {
            "runs": [], "forgiven_until": 0.0}

    def _write(self, data: dict[str, Any]) -> None:
        try:
            write_json_atomically(self.path, data)
        except OSError as exc:  # a full or read-only disk must not stop the agent
            log.warning("run_ledger_not_saved path=%s error=%s", self.path, exc)

    def begin(self, pid: int, now: float | None = None) -> SafeModeCause | None:
        """Record this start; what puts it in safe mode, or None for a normal start."""
        now = time.time() if now is None else now
        data = self._read()
        runs: list[dict[str, Any]] = data["runs"]
        for run in runs:
            if run.get("state") == "running":  # when it died is unknown: it is found now
                run["state"], run["found"] = "abnormal", now
                run.setdefault("error", SILENT_END)
        forgiven = float(data.get("forgiven_until") or 0.0)
        abnormal = [r for r in runs if r.get("state") in ("abnormal", "crashed")
                    and float(r.get("ended") or r.get("found") or 0) > forgiven
                    and now - float(r.get("ended") or r.get("started") or 0) <= WINDOW_SECONDS]
        runs.append({"started": now, "pid": pid, "state": "running"})
        data["runs"] = runs[-RUNS_KEPT:]
        self._run = now
        self._write(data)
        if len(abnormal) < ABNORMAL_ENDS:
            return None
        return SafeModeCause(now, len(abnormal),
                             describe_end(str(abnormal[-1].get("error") or SILENT_END)))

    def last_end(self) -> LastEnd | None:
        """How the run before this process's ended (before :meth:`begin`: the last recorded
        run, which no agent runs now); None when it stopped cleanly or none is recorded."""
        earlier = [run for run in self._read()["runs"] if run.get("started") != self._run]
        if not earlier or earlier[-1].get("state") == "clean":
            return None
        run = earlier[-1]
        at = float(run.get("ended") or run.get("found") or run.get("started") or 0.0)
        return LastEnd(at, describe_end(str(run.get("error") or SILENT_END)))

    def end(self, error: str | None = None) -> None:
        """Mark this run ``clean`` (None) or ``crashed`` with ``error``."""
        data = self._read()
        for run in data["runs"]:
            if run.get("started") == self._run and run.get("state") == "running":
                run["state"], run["ended"] = ("clean", time.time()) if error is None else (
                    "crashed", time.time())
                if error is not None:
                    run["error"] = error
        self._write(data)

    def note_end(self, reason: str) -> None:
        """How the last open run ended, as told after it by someone who saw it (systemd, through
        ``ExecStopPost=edge-cli safe-state``); the next start still counts it as abnormal."""
        data = self._read()
        open_runs = [run for run in data["runs"] if run.get("state") == "running"]
        if open_runs:
            open_runs[-1]["error"] = reason
            self._write(data)

    def forgive(self, now: float | None = None) -> None:
        """The abnormal ends so far no longer count (``edge-cli resume``, ``/resume``)."""
        data = self._read()
        data["forgiven_until"] = time.time() if now is None else now
        self._write(data)


class SafeMode:
    """Whether this run is in safe mode, and how it leaves it (``on_resume`` starts the rules and
    the scheduler). Inactive unless built with a cause."""

    def __init__(self, cause: SafeModeCause | None = None, ledger: RunLedger | None = None,
                 on_resume: Callable[[], Awaitable[None]] | None = None):
        self.cause = cause
        self.ledger = ledger
        self.on_resume = on_resume

    @property
    def active(self) -> bool:
        return self.cause is not None

    def status(self) -> dict[str, Any] | None:
        return None if self.cause is None else self.cause.as_dict()

    def refusal(self) -> str | None:
        """The reply to a model turn in safe mode; None when turns may go to the model."""
        return None if self.cause is None else self.cause.refusal()

    async def resume(self, by: str) -> str:
        """Leave safe mode: the ends are forgiven, then rules and schedules start."""
        if self.cause is None:
            return "The agent is not in safe mode."
        self.cause = None
        if self.ledger is not None:
            self.ledger.forgive()
        log.warning("safe_mode_left by=%s", by)
        if self.on_resume is not None:
            await self.on_resume()
        return "Left safe mode: rules and schedules run, and model turns are answered again."
