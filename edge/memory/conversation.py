"""Autosave: the user's message, once answered, is kept as a
Conversation memory under a key unique to that message. Recall into the prompt is the agent's
memory-context step (:mod:`edge.agent.memory_context`)."""

from __future__ import annotations

import logging
import secrets
import sqlite3

from edge.core.exc import EdgeError
from edge.memory.base import Category, Memory

log = logging.getLogger(__name__)

def autosave_key(sender: str) -> str:
    """``user_msg_<sender>_<128 random bits in hex>``: unique per message, so autosaves never overwrite."""
    safe = "".join(c if c.isalnum() or c in "-_.:" else "_" for c in sender)[:64]
    return f"user_msg_{safe}_{secrets.token_hex(16)}"


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
