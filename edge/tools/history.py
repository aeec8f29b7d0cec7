"""The ``history`` tool: what the audit trail recorded at the door to the pins (read-only), so
"when did the pump last run, and who started it?" is answered from the record, not from memory.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from pydantic import Field

from edge.audit import history_text, read_history
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

    def __init__(self, path: Path):
        self.path = path

    async def run(self, params: HistoryArgs, requester: Requester) -> ToolResult:
        try:
            since = time.time() - parse_duration(params.since) if params.since else None
        except ValueError as exc:
            return ToolResult(False, error=str(exc))
        records = await asyncio.to_thread(read_history, self.path, params.pin, since=since,
                                          who=params.who, limit=params.limit)
        return ToolResult(True, history_text(records, params.pin),
                          data={"records": [a.as_dict() for a in records]})
