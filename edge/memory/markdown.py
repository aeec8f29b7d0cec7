"""MarkdownMemory: append-only, human-readable files that Git can track.
Core goes to ``MEMORY.md``, everything else to ``memory/YYYY-MM-DD.md``,
one line per store::

    - **pump-schedule** (core, 2026-02-19T07:00:00Z): the pump runs at 7am

The last line for a key is its current value. Recall scores each entry by the share of query
words it contains. ``forget`` always returns False: this backend is an audit log.
"""

from __future__ import annotations

import asyncio
import builtins
import os
import re
from collections.abc import Collection
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from edge.memory.base import Category, Memory, MemoryEntry, MemoryFailure
from edge.memory.ranking import query_terms

LINE = re.compile(r"^- \*\*(?P<key>.+?)\*\* \((?P<category>[^,()]+), (?P<at>[^,()]+)"
                  r"(?:, session (?P<session>[^()]*))?\): (?P<content>.*)$")


def _one_line(text: str) -> str:
    return " ".join(text.split())


class MarkdownMemory(Memory):
    """Append-only Markdown files; nothing expires and there are no vectors to reindex."""

    name = "markdown"

    def __init__(self, directory: Path):
        self.directory = Path(directory)
        self._lock = asyncio.Lock()

    def _file_for(self, category: Category, when: datetime) -> Path:
        if category == Category.CORE:
            return self.directory / "MEMORY.md"
        return self.directory / "memory" / f"{when:%Y-%m-%d}.md"

    def _files(self) -> builtins.list[Path]:
        files = [self.directory / "MEMORY.md", *sorted((self.directory / "memory").glob("*.md"))]
        return [f for f in files if f.is_file()]

    def _read_all(self) -> dict[str, MemoryEntry]:
        """Latest entry per key, in file order."""
        entries: dict[str, MemoryEntry] = {}
        for path in self._files():
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                match = LINE.match(line)
                if match:
                    key = match["key"]
                    entries.pop(key, None)
                    entries[key] = MemoryEntry(f"{path.name}:{number}", key, match["content"],
                                               Category.parse(match["category"]), match["at"],
                                               match["session"] or None)
        return entries

    async def store(self, key: str, content: str, category: Category,
                    session_id: str | None = None) -> None:
        key, content = _one_line(key), _one_line(content)
        if not key or not content:
            raise MemoryFailure("a memory needs a non-empty key and content")
        if "**" in key:
            raise MemoryFailure("a markdown memory key cannot contain '**'; choose another key")
        if any(c in category.value for c in "(),"):
            raise MemoryFailure("a markdown memory category cannot contain '(', ')' or ','")
        now = datetime.now(UTC)
        session = f", session {_one_line(session_id)}" if session_id else ""
        line = f"- **{key}** ({category.value}, {now:%Y-%m-%dT%H:%M:%SZ}{session}): {content}\n"
        path = self._file_for(category, now)
        async with self._lock:
            await asyncio.to_thread(self._append, path, line)

    @staticmethod
    def _append(path: Path, line: str) -> None:
        """Append ``line``; the file is 0600 whatever the umask (it holds what people said)."""
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8") as fh:
            os.fchmod(fd, 0o600)
            fh.write(line)

    async def recall(self, query: str, limit: int = 5, session_id: str | None = None, *,
                     scopes: Collection[str | None] | None = None) -> list[MemoryEntry]:
        terms = [t.strip("?!.,;:'\"").lower() for t in query_terms(query)]
        terms = [t for t in terms if t]
        if not terms or limit <= 0:
            return []
        scored = []
        for entry in (await asyncio.to_thread(self._read_all)).values():
            if session_id is not None and entry.session_id != session_id:
                continue
            if scopes is not None and entry.session_id not in scopes:
                continue
            text = f"{entry.key} {entry.content}".lower()
            hits = sum(1 for term in terms if term in text)
            if hits:
                entry.score = hits / len(terms)
                scored.append(entry)
        scored.sort(key=lambda e: (e.score, e.timestamp), reverse=True)
        return scored[:limit]

    async def get(self, key: str) -> MemoryEntry | None:
        return (await asyncio.to_thread(self._read_all)).get(_one_line(key))

    async def list(self, category: Category | None = None,
                   session_id: str | None = None) -> builtins.list[MemoryEntry]:
        entries = (await asyncio.to_thread(self._read_all)).values()
        return [e for e in reversed(list(entries))
                if (category is None or e.category == category)
                and (session_id is None or e.session_id == session_id)]

    async def forget(self, key: str) -> bool:
        return False

    async def count(self) -> int:
        return len(await asyncio.to_thread(self._read_all))

    async def health_check(self) -> bool:
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError:
            return False
        return self.directory.is_dir()

    async def close(self) -> None:
        return None

    async def stats(self) -> dict[str, Any]:
        entries = await asyncio.to_thread(self._read_all)
        by_category: dict[str, int] = {}
        for entry in entries.values():
            by_category[entry.category.value] = by_category.get(entry.category.value, 0) + 1
        return {"backend": self.name, "path": str(self.directory), "count": len(entries),
                "by_category": by_category, "embedder": "none", "model": "none"}

