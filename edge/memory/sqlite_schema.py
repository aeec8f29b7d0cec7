"""The SQLite memory schema and opening it safely.

Tables: ``memories`` (unique ``key``, upsert on it; ``num`` is an explicit integer primary key so
VACUUM cannot renumber the rows the FTS index points at), ``memories_fts`` (FTS5 over key and
content, kept in sync by three triggers; ``memories_fts_terms`` gives each term's document count)
and ``embedding_cache`` (LRU by ``accessed_at``).
Pragmas: WAL, synchronous NORMAL (a committed store survives a crash of the process), 8 MB mmap,
a 1 MiB page cache (the soak measured the default 2 MB one full at about 500 memories; recall
reads vectors from the in-memory index and rows through the mmap), the WAL cut back to 1 MiB after
each checkpoint (else it stays at its largest, about 4 MB), temp store in memory. Opening has a
timeout so a locked file cannot hang the agent.
The database and its ``-wal`` and ``-shm`` files are 0600 whatever the umask (SQLite gives the
journal files the database file's mode); its directory is created 0700. Both are set before
connecting, by :func:`edge.core.sqlite_files.prepare_sqlite_file`, which never opens a descriptor of
an existing database: closing one would drop the locks of this process's live connections to it
and let another process delete the WAL under them (issue 23).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import aiosqlite

from edge.core.sqlite_files import prepare_sqlite_file
from edge.memory.base import MemoryFailure

SCHEMA = """
CREATE TABLE IF NOT EXISTS memories (
    num INTEGER PRIMARY KEY,
    id TEXT UNIQUE NOT NULL,
    key TEXT UNIQUE NOT NULL,
    content TEXT NOT NULL,
    category TEXT NOT NULL DEFAULT 'core',
    embedding BLOB,
    embedding_model TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    session_id TEXT
);
CREATE INDEX IF NOT EXISTS memories_category ON memories(category, updated_at);
CREATE INDEX IF NOT EXISTS memories_session ON memories(session_id);

CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts USING fts5(
    key, content, content=memories, content_rowid=num
);
CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts_terms USING fts5vocab(memories_fts, 'row');
CREATE TRIGGER IF NOT EXISTS memories_fts_insert AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts(rowid, key, content) VALUES (new.num, new.key, new.content);
END;
CREATE TRIGGER IF NOT EXISTS memories_fts_delete AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, key, content)
    VALUES ('delete', old.num, old.key, old.content);
END;
CREATE TRIGGER IF NOT EXISTS memories_fts_update AFTER UPDATE OF key, content ON memories BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, key, content)
    VALUES ('delete', old.num, old.key, old.content);
    INSERT INTO memories_fts(rowid, key, content) VALUES (new.num, new.key, new.content);
END;

CREATE TABLE IF NOT EXISTS embedding_cache (
    content_hash TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    embedding BLOB NOT NULL,
    created_at TEXT NOT NULL,
    accessed_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS embedding_cache_lru ON embedding_cache(accessed_at);
"""

PRAGMAS = (
    "PRAGMA journal_mode = WAL",
    "PRAGMA synchronous = NORMAL",
    "PRAGMA mmap_size = 8388608",
    "PRAGMA cache_size = -1024",
    "PRAGMA journal_size_limit = 1048576",
    "PRAGMA temp_store = MEMORY",
    "PRAGMA foreign_keys = ON",
)


async def open_database(path: Path, timeout: float) -> aiosqlite.Connection:
    """Open (creating) the database with the schema, or raise MemoryFailure within ``timeout``."""
    try:
        prepare_sqlite_file(path)
    except OSError as exc:
        raise MemoryFailure(f"cannot create the memory database {path} or make it private "
                            f"({exc}); check [paths] state_dir and its permissions") from exc

    async def connect() -> aiosqlite.Connection:
        db = await aiosqlite.connect(path, timeout=timeout)
        try:
            await db.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
            for pragma in PRAGMAS:
                await db.execute(pragma)
            await db.executescript(SCHEMA)
            await db.commit()
        except BaseException:
            await db.close()
            raise
        return db

    try:
        return await asyncio.wait_for(connect(), timeout)
    except TimeoutError:
        raise MemoryFailure(f"opening {path} timed out after {timeout:g}s; another process may "
                            "hold it locked (stop it, or raise [memory] open_timeout_seconds)") from None
    except aiosqlite.Error as exc:
        raise MemoryFailure(f"cannot open memory database {path}: {exc}; move the file aside "
                            "to start afresh (Core memories come back from MEMORY_SNAPSHOT.md)") from exc
