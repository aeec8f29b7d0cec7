"""Memory context for a turn (seed 000_a48630eb162deda3.txt 3.2 step 5; seed 004 Phase 3):
recall for the sender and, in groups, for the group; entries below the relevance threshold, with
image markers or tool results, history keys, or over ENTRY_SKIP_CHARS are skipped; at most 4
entries of 800 characters, 4,000 in total. The block goes into the system prompt."""

from __future__ import annotations

import logging
from typing import Any, Protocol

from edge.channels.base import ChannelMessage

log = logging.getLogger(__name__)

MAX_ENTRIES = 4
ENTRY_MAX_CHARS = 800
TOTAL_MAX_CHARS = 4_000
ENTRY_SKIP_CHARS = 4_000
MIN_RELEVANCE = 0.4
RECALL_LIMIT = 5


class MemoryRecall(Protocol):
    """The part of the Memory protocol the pipeline needs; entries have key, content, score."""

    async def recall(self, query: str, limit: int = 5, session_id: str | None = None) -> list[Any]: ...


def _usable(entry: Any) -> bool:
    score = getattr(entry, "score", None)
    content = entry.content
    return not ((score is not None and score < MIN_RELEVANCE)
                or "[IMAGE:" in content or "<tool_result" in content
                or str(entry.key).endswith("_history") or len(content) > ENTRY_SKIP_CHARS)


async def build_memory_context(memory: MemoryRecall | None, msg: ChannelMessage) -> str:
    if memory is None:
        return ""
    scopes = [msg.caller] + ([msg.conversation_key] if msg.is_group else [])
    entries, seen = [], set()
    for scope in scopes:
        try:
            found = await memory.recall(msg.content, RECALL_LIMIT, session_id=scope)
        except Exception as exc:  # memory trouble must not stop the turn
            log.warning("memory_recall_failed scope=%s error=%r", scope, exc)
            continue
        for entry in found:
            if entry.key not in seen and _usable(entry):
                seen.add(entry.key)
                entries.append(entry)
    lines, total = [], 0
    for entry in entries[:MAX_ENTRIES]:
        line = f"- {entry.key}: {entry.content[:ENTRY_MAX_CHARS]}"
        if total + len(line) > TOTAL_MAX_CHARS:
            break
        lines.append(line)
        total += len(line)
    return "[Memory context]\n" + "\n".join(lines) if lines else ""
