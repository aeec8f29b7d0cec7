"""What the agent pipeline does with memory around each message (seed 002 and seed 004):
recall relevant memories into a context block before the model runs, and autosave the user's
message afterwards as a Conversation memory with a key unique to that message.

>>> format_context([])
''
"""

from __future__ import annotations

import logging
import sqlite3
import uuid

from edge.exc import EdgeError
from edge.memory.base import Category, Memory, MemoryEntry

log = logging.getLogger(__name__)

CONTEXT_HEADER = "[Memory context]"


def format_context(entries: list[MemoryEntry]) -> str:
    if not entries:
        return ""
    lines = [CONTEXT_HEADER, *(f"- {e.key}: {e.content}" for e in entries)]
    return "\n".join(lines) + "\n"


async def recall_context(memory: Memory, query: str, *, limit: int = 5, min_score: float = 0.4,
                         session_id: str | None = None) -> str:
    """The ``[Memory context]`` block for ``query`` ('' when nothing relevant). A failing memory
    is logged and yields '' so a message is never lost to it."""
    try:
        entries = await memory.recall(query, limit, session_id)
    except (EdgeError, sqlite3.Error) as exc:
        log.warning("memory_recall_failed reason=%s", exc)
        return ""
    return format_context([e for e in entries if e.score is None or e.score >= min_score])


def autosave_key(sender: str) -> str:
    """``user_msg_<sender>_<uuid>``: unique per message, so autosaves never overwrite."""
    safe = "".join(c if c.isalnum() or c in "-_.:" else "_" for c in sender)[:64]
    return f"user_msg_{safe}_{uuid.uuid4().hex}"


async def autosave_user_message(memory: Memory, text: str, sender: str, *, min_chars: int = 20,
                                session_id: str | None = None) -> str | None:
    """Store ``text`` as a Conversation memory when it has at least ``min_chars`` characters;
    returns the key, or None when skipped or failed (failures are logged, never raised)."""
    if len(text.strip()) < min_chars:
        return None
    key = autosave_key(sender)
    try:
        await memory.store(key, text.strip(), Category.CONVERSATION, session_id)
    except (EdgeError, sqlite3.Error) as exc:
        log.warning("memory_autosave_failed sender=%s reason=%s", sender, exc)
        return None
    return key
