"""Memory tools for the model: ``memory_store``, ``memory_recall``, ``memory_forget``
(the model reads and writes long-term memory for the person who asked).

Each is built on a Memory and an admin check, through :class:`PersonalMemory`: a person stores,
recalls and forgets their own memories and recalls the shared ones; only an admin (or the local
operator) stores or forgets shared ones. Failures come back as ``ToolResult(success=False)``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field

from edge.core.requester import Requester
from edge.memory.access import (
    LOCAL_OPERATOR_CHANNELS,
    IsAdmin,
    PersonalMemory,
    SharedMemoryRefused,
    local_operator_only,
)
from edge.memory.base import Category, Memory, MemoryFailure
from edge.tools.base import ModelTool, P, Tool, ToolArgs, ToolResult


class StoreArgs(ToolArgs):
    key: str = Field(min_length=1, max_length=200,
                     description="Short unique name, e.g. 'user-timezone'; storing it again replaces it")
    content: str = Field(min_length=1, max_length=4000, description="The fact to remember")
    category: Literal["core", "daily", "conversation"] | str = Field(
        default="core", description="core (lasting facts, preferences, decisions), daily (today's "
                                    "log), conversation (short-lived), or a custom name")
    shared: bool = Field(default=False, description="Visible to everyone who talks to the agent; "
                                                    "only an admin may store shared memories. "
                                                    "Default: private to the person asking")


class RecallArgs(ToolArgs):
    query: str = Field(min_length=1, description="What to look for, in plain words")
    limit: int = Field(default=5, ge=1, le=20, description="How many memories at most")


class ForgetArgs(ToolArgs):
    key: str = Field(min_length=1, description="The key of the memory to delete")


class _MemoryTool(ModelTool[P]):
    def __init__(self, memory: Memory, is_admin: IsAdmin = local_operator_only):
        self.memory = memory
        self.personal = PersonalMemory(memory, is_admin)

    async def execute(self, args: dict[str, Any], requester: Requester) -> ToolResult:
        try:
            return await super().execute(args, requester)
        except SharedMemoryRefused as exc:
            return ToolResult(False, error=str(exc))
        except (sqlite3.Error, MemoryFailure) as exc:
            return ToolResult(False, error=f"memory store failed: {exc}")


class MemoryStoreTool(_MemoryTool[StoreArgs]):
    name = "memory_store"
    description = ("Remember a fact for later conversations under a key. Use for preferences, "
                   "decisions and facts about the user, the devices or the setup.")
    Params = StoreArgs

    async def run(self, params: StoreArgs, requester: Requester) -> ToolResult:
        category = Category.parse(params.category)
        await self.personal.store(requester, params.key, params.content, category, params.shared)
        shared = ", shared" if params.shared else ""
        return ToolResult(True, f"remembered '{params.key}' ({category}{shared})",
                          data={"key": params.key, "category": category.value,
                                "shared": params.shared})


class MemoryRecallTool(_MemoryTool[RecallArgs]):
    name = "memory_recall"
    description = "Search long-term memory for facts relevant to a query, best match first."
    Params = RecallArgs

    async def run(self, params: RecallArgs, requester: Requester) -> ToolResult:
        entries = await self.personal.recall(requester, params.query, params.limit)
        if not entries:
            return ToolResult(True, "no relevant memories", data={"entries": []})
        lines = [f"- {e.key}{' (shared)' if e.session_id is None else ''}: {e.content}"
                 + (f" (score {e.score:.2f})" if e.score is not None else "") for e in entries]
        return ToolResult(True, "\n".join(lines), data={"entries": [
            {**e.as_dict(), "shared": e.session_id is None} for e in entries]})


class MemoryForgetTool(_MemoryTool[ForgetArgs]):
    name = "memory_forget"
    description = "Delete one of the asking person's memories by its key."
    Params = ForgetArgs

    async def run(self, params: ForgetArgs, requester: Requester) -> ToolResult:
        if await self.personal.forget(requester, params.key):
            return ToolResult(True, f"forgot '{params.key}'", data={"key": params.key, "deleted": True})
        return ToolResult(False, error=f"no memory with key '{params.key}' could be deleted "
                                       f"(the {self.memory.name} backend may be append-only)",
                          data={"key": params.key, "deleted": False})


def configured_admins(admins: Mapping[str, frozenset[str]]) -> IsAdmin:
    """Admins as configured per channel (the runtime's table: ``[channels.telegram] admins``,
    ``[channels.signal] admins``), and the local operator (the terminal running the agent, the
    control socket)."""

    def is_admin(requester: Requester) -> bool:
        return (requester.channel in LOCAL_OPERATOR_CHANNELS
                or requester.sender in admins.get(requester.channel, frozenset()))

    return is_admin


def memory_tools(memory: Memory, is_admin: IsAdmin = local_operator_only) -> list[Tool]:
    return [MemoryStoreTool(memory, is_admin), MemoryRecallTool(memory, is_admin),
            MemoryForgetTool(memory, is_admin)]

