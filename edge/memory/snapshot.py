"""``MEMORY_SNAPSHOT.md``: every Core memory as plain Markdown that Git can track, and the
cold-start recovery that reads it back::

    # Memory snapshot

    ## pump-schedule
    The pump runs at 7am.

A content line that would read as a heading (``## ``), a comment (``<!--``) or starts with a
backslash is written with a leading backslash, which the reader removes. A person's private Core
memory keeps its owner: a ``<!-- scope telegram:42 -->`` line under its heading, so a cold start
never turns it into a shared one. The file is 0600: it holds what people told the agent.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

from edge.core.files import write_atomically
from edge.memory.base import Category, Memory, MemoryEntry

SNAPSHOT_NAME = "MEMORY_SNAPSHOT.md"
HEADER = "# Memory snapshot"
SCOPE = re.compile(r"^<!-- scope (?P<scope>.+) -->$")


def render_snapshot(entries: list[MemoryEntry]) -> str:
    stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    parts = [HEADER, "",
             f"<!-- Core memories of edge-agent, written by hygiene at {stamp}. When brain.db is "
             "missing at start, the agent restores them from this file. -->", ""]
    for entry in sorted(entries, key=lambda e: e.key):
        parts.append(f"## {' '.join(entry.key.split())}")
        if entry.session_id:
            parts.append(f"<!-- scope {' '.join(entry.session_id.split())} -->")
        for line in entry.content.splitlines() or [""]:
            parts.append("\\" + line if line.startswith(("## ", "\\", "<!--")) else line)
        parts.append("")
    return "\n".join(parts)


def parse_snapshot(text: str) -> list[tuple[str, str, str | None]]:
    """``(key, content, scope)`` triples, in file order (scope None: a shared memory)."""
    found: list[tuple[str, str, str | None]] = []
    key: str | None = None
    scope: str | None = None
    lines: list[str] = []

    def flush() -> None:
        if key is not None:
            content = "\n".join(lines).strip("\n")
            if content.strip():
                found.append((key, content, scope))

    for line in text.splitlines():
        if line.startswith("## "):
            flush()
            key, scope, lines = line[3:].strip(), None, []
        elif key is not None and not lines and (owner := SCOPE.match(line)):
            scope = owner["scope"]
        elif key is not None and not (line.startswith("<!--") and not lines):
            lines.append(line[1:] if line.startswith("\\") else line)
    flush()
    return found


async def write_snapshot(memory: Memory, path: Path) -> int:
    """Dump Core memories to ``path``; returns how many."""
    entries = await memory.list(Category.CORE)
    write_atomically(path, render_snapshot(entries))
    return len(entries)


async def hydrate_from_snapshot(memory: Memory, path: Path) -> int:
    """Store every snapshot entry as Core into ``memory`` (a fresh SqliteMemory)."""
    items: list[tuple[str, str, Category, str | None]] = [
        (key, content, Category.CORE, scope)
        for key, content, scope in parse_snapshot(path.read_text(encoding="utf-8"))]
    for start in range(0, len(items), 256):
        await memory.store_many(items[start:start + 256])
    return len(items)
