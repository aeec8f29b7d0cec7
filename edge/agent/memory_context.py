"""Memory context for a turn:
memories of the sender and, in groups, of the group, plus unscoped ones (Core facts and what the
model stored with its tools); another person's conversation memories never reach this prompt.
Entries below the relevance threshold, with image markers or tool results, history keys, or
over ENTRY_SKIP_CHARS are skipped; at most 4 entries of 800 characters, 4,000 in total. The block
goes into the system prompt."""

from __future__ import annotations

import logging
from typing import Protocol

from edge.channels.base import ChannelMessage
from edge.memory.base import MemoryEntry

log = logging.getLogger(__name__)

MAX_ENTRIES = 4
ENTRY_MAX_CHARS = 800
TOTAL_MAX_CHARS = 4_000
ENTRY_SKIP_CHARS = 4_000
MIN_RELEVANCE = 0.4
RECALL_LIMIT = 5
RECALL_OVERFETCH = 4
"""Fetch this many times RECALL_LIMIT, then keep the caller's scopes (one query, not one per scope)."""


class MemoryRecall(Protocol):
    """The part of the Memory protocol the pipeline needs."""

    async def recall(self, query: str, limit: int = 5,
                     session_id: str | None = None) -> list[MemoryEntry]: ...


def memory_scopes(msg: ChannelMessage) -> set[str | None]:
    """Session ids whose memories this message may see: unscoped, the sender, the group."""
    return {None, msg.caller} | ({msg.conversation_key} if msg.is_group else set())


def _usable(entry: MemoryEntry) -> bool:
    score, content = entry.score, entry.content
    return not ((score is not None and score < MIN_RELEVANCE)
                or "[IMAGE:" in content or "<tool_result" in content
                or str(entry.key).endswith("_history") or len(content) > ENTRY_SKIP_CHARS)


async def build_memory_context(memory: MemoryRecall | None, msg: ChannelMessage) -> str:
    if memory is None:
        return ""
    try:
        found = await memory.recall(msg.content, RECALL_LIMIT * RECALL_OVERFETCH)
    except Exception as exc:  # memory trouble must not stop the turn
        log.warning("memory_recall_failed by=%s error=%r", msg.caller, exc)
        return ""
    scopes = memory_scopes(msg)
    entries = [e for e in found if e.session_id in scopes and _usable(e)]
    lines, total = [], 0
    for entry in entries[:MAX_ENTRIES]:
        line = f"- {entry.key}: {entry.content[:ENTRY_MAX_CHARS]}"
        if total + len(line) > TOTAL_MAX_CHARS:
            break
        lines.append(line)
        total += len(line)
    return "[Memory context]\n" + "\n".join(lines) if lines else ""
