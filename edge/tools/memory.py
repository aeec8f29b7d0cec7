"""Memory tools for the model: ``memory_store``, ``memory_recall``, ``memory_forget``
(the model reads and writes its own long-term memory).

Each is built on a Memory; failures come back as ``ToolResult(success=False)``.
"""

from __future__ import annotations

import sqlite3
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from edge.memory.base import Category, Memory
from edge.requester import Requester
from edge.tools.base import ModelTool, P, Tool, ToolResult


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


class StoreArgs(_Args):
    key: str = Field(min_length=1, max_length=200,
                     description="Short unique name, e.g. 'user-timezone'; storing it again replaces it")
    content: str = Field(min_length=1, max_length=4000, description="The fact to remember")
    category: Literal["core", "daily", "conversation"] | str = Field(
        "core", description="core (lasting facts, preferences, decisions), daily (today's log), "
                            "conversation (short-lived), or a custom name")


class RecallArgs(_Args):
    query: str = Field(min_length=1, description="What to look for, in plain words")
    limit: int = Field(5, ge=1, le=20, description="How many memories at most")


class ForgetArgs(_Args):
    key: str = Field(min_length=1, description="The key of the memory to delete")


class _MemoryTool(ModelTool[P]):
    def __init__(self, memory: Memory):
        self.memory = memory

    async def execute(self, args: dict[str, Any], requester: Requester) -> ToolResult:
        try:
            return await super().execute(args, requester)
        except sqlite3.Error as exc:
            return ToolResult(False, error=f"memory store failed: {exc}")


class MemoryStoreTool(_MemoryTool[StoreArgs]):
    name = "memory_store"
    description = ("Remember a fact for later conversations under a key. Use for preferences, "
                   "decisions and facts about the user, the devices or the setup.")
    Params = StoreArgs

    async def run(self, params: StoreArgs, requester: Requester) -> ToolResult:
        category = Category.parse(params.category)
        await self.memory.store(params.key, params.content, category)
        return ToolResult(True, f"remembered '{params.key}' ({category})",
                          data={"key": params.key, "category": category.value})


class MemoryRecallTool(_MemoryTool[RecallArgs]):
    name = "memory_recall"
    description = "Search long-term memory for facts relevant to a query, best match first."
    Params = RecallArgs

    async def run(self, params: RecallArgs, requester: Requester) -> ToolResult:
        entries = await self.memory.recall(params.query, params.limit)
        if not entries:
            return ToolResult(True, "no relevant memories", data={"entries": []})
        lines = [f"- {e.key}: {e.content}" + (f" (score {e.score:.2f})" if e.score is not None else "")
                 for e in entries]
        return ToolResult(True, "\n".join(lines),
                          data={"entries": [e.as_dict() for e in entries]})


class MemoryForgetTool(_MemoryTool[ForgetArgs]):
    name = "memory_forget"
    description = "Delete the memory stored under a key."
    Params = ForgetArgs

    async def run(self, params: ForgetArgs, requester: Requester) -> ToolResult:
        if await self.memory.forget(params.key):
            return ToolResult(True, f"forgot '{params.key}'", data={"key": params.key, "deleted": True})
        return ToolResult(False, error=f"no memory with key '{params.key}' could be deleted "
                                       f"(the {self.memory.name} backend may be append-only)",
                          data={"key": params.key, "deleted": False})


def memory_tools(memory: Memory) -> list[Tool]:
    return [MemoryStoreTool(memory), MemoryRecallTool(memory), MemoryForgetTool(memory)]

