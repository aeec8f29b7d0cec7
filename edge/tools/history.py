"""The ``history`` tool: what the audit trail recorded at the door to the pins (read-only), so
"when did the pump last run, and who started it?" is answered from the record, not from memory.

A person on a chat channel who is not one of its admins sees their own calls and what the door
did to the pins they switched, other callers withheld (:func:`edge.audit.for_person`), whether they
ask with ``/history`` or ask the model: the trail names other people and the local account.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from pathlib import Path

from pydantic import Field

from edge.audit import for_person, history_text, read_history
from edge.core.durations import parse_duration
from edge.core.requester import Requester
from edge.tools.base import ModelTool, ToolArgs, ToolResult


class HistoryArgs(ToolArgs):
    pin: str | None = Field(default=None, description="Only this pin (name or alias, e.g. 'pump')")
    since: str | None = Field(default=None, description="Only this recent, e.g. '2h', '3d'")
    who: str | None = Field(default=None, description=(
        "Only this requester: 'telegram:42', a channel such as 'schedule' or 'cli', or a name"))
    limit: int = Field(default=20, ge=1, le=200, description="At most this many, newest kept")


class HistoryTool(ModelTool[HistoryArgs]):
    name = "history"
    description = ("Read the audit trail of pin actuations and refusals (when, which pin, what was "
                   "asked and read back, who asked, through which door and why). Read-only.")
    Params = HistoryArgs

    PERSON_READS = 200
    """How far back a person's own calls are looked for among everyone's."""

    def __init__(self, path: Path, admins: Mapping[str, frozenset[str]] | None = None):
        """``admins``: channel -> its admins, for every channel of people (the approval gate's
        table); a sender of such a channel who is not an admin sees only their part of the
        trail. None: no channel of people (tools built alone, ``edge-cli history``)."""
        self.path = path
        self.admins = admins

    def sees_everyone(self, requester: Requester) -> bool:
        admins = self.admins or {}
        return requester.channel not in admins or requester.sender in admins[requester.channel]

    async def run(self, params: HistoryArgs, requester: Requester) -> ToolResult:
        try:
            since = time.time() - parse_duration(params.since) if params.since else None
        except ValueError as exc:
            return ToolResult(False, error=str(exc))
        everyone = self.sees_everyone(requester)
        records = await asyncio.to_thread(
            read_history, self.path, params.pin, since=since, who=params.who,
            limit=params.limit if everyone else max(params.limit, self.PERSON_READS))
        if not everyone:
            records = for_person(records, requester.caller)[-params.limit:]
            if not records:
                return ToolResult(True, "You have not switched anything that is recorded (an "
                                  "admin sees everyone's).", data={"records": []})
        return ToolResult(True, history_text(records, params.pin),
                          data={"records": [a.as_dict() for a in records]})
