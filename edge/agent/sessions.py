"""Sessions on disk: metadata in ``sessions.json``, one
``<sessionId>.jsonl`` transcript per session, under ``<state_dir>/sessions``.

- ``sessions.json`` is written atomically (temp file, fsync, rename, mode 0600).
- Transcripts are appended before a turn is acknowledged and fsynced just after
  (``fsync_queue.py``); a line cut by a crash is ignored on read, so
  every acknowledged turn survives the process being killed.
- A write lock per session (``<id>.lock``, created exclusively, holding pid and time); a lock
  whose pid is dead or that is older than 30 minutes is stale and removed.
- Resets: ``/new`` or ``/reset``, a daily reset hour, and an idle timeout start a new session.
- A session holds its last ``KEPT_TURNS`` turns, in memory and on disk: once it has twice as
  many, the older ones are dropped and the transcript is rewritten (atomically) with the rest.
  Without a reset (none is configured by default) one chat is one session for the agent's whole
  life, and the soak measured both growing with every turn.
- The transcript of a session that ended (``/new``, a reset) stays on disk for
  ``[sessions] ended_transcript_days`` (default 30), then is removed when a session next ends.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import secrets
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from edge.agent.fsync_queue import FsyncQueue, append_bytes
from edge.agent.history import RAW_TAIL_TURNS
from edge.core.files import write_atomically, write_json_atomically
from edge.core.messages import ChatMessage

log = logging.getLogger(__name__)

STALE_LOCK_SECONDS = 30 * 60
LOCK_TIMEOUT_SECONDS = 10.0
LOCK_RETRY_SECONDS = 0.05
INDEX_FLUSH_SECONDS = 1.0
KEPT_TURNS = RAW_TAIL_TURNS
"""All the history a model call ever looks at (:func:`edge.agent.history.prepare_history`)."""
"""``updated_at`` alone is saved at most this often (and at close): it only steers idle resets."""

@dataclass
class SessionEntry:
    session_id: str
    created_at: float
    updated_at: float
    channel: str = ""
    chat_type: str = "direct"
    compaction_count: int = 0
    summary: str = ""
    model_override: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0

    @classmethod
    def new(cls, channel: str = "", chat_type: str = "direct") -> SessionEntry:
        now = time.time()
        return cls(secrets.token_hex(16), now, now, channel, chat_type)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class SessionLock:
    """An exclusive lock file; stale locks (dead pid, or older than 30 min) are cleared."""

    def __init__(self, path: Path):
        self.path = path

    def _stale(self) -> bool:
        try:
            info = json.loads(self.path.read_text())
            return (not _pid_alive(int(info["pid"]))
                    or time.time() - float(info["created_at"]) > STALE_LOCK_SECONDS)
        except (OSError, ValueError, KeyError, TypeError):
            return True

    def try_acquire(self) -> bool:
        """Take the lock if it is free or stale; False while another live holder has it."""
        while True:
            try:
                fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
            except FileExistsError:
                if not self._stale():
                    return False
                log.warning("stale_session_lock_removed path=%s", self.path)
                self.path.unlink(missing_ok=True)
                continue
            try:
                os.write(fd, json.dumps({"pid": os.getpid(), "created_at": time.time()}).encode())
            finally:
                os.close(fd)
            return True

    def release(self) -> None:
        self.path.unlink(missing_ok=True)

    async def __aenter__(self) -> SessionLock:
        deadline = time.monotonic() + LOCK_TIMEOUT_SECONDS
        while not self.try_acquire():
            if time.monotonic() > deadline:
                raise TimeoutError(f"session lock {self.path} is held by another process")
            await asyncio.sleep(LOCK_RETRY_SECONDS)
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.release()


def read_transcript(path: Path) -> list[dict[str, Any]]:
    """Every whole JSON line; a trailing line cut by a crash is skipped."""
    records: list[dict[str, Any]] = []
    try:
        with path.open("rb") as fh:
            for raw in fh:
                try:
                    records.append(json.loads(raw))
                except ValueError:
                    log.warning("transcript_line_skipped path=%s (partial write?)", path)
    except FileNotFoundError:
        pass
    return records


def _write_transcript(path: Path, turns: list[ChatMessage]) -> None:
    """Replace the transcript with ``turns`` (stamped now), atomically."""
    now = time.time()
    write_atomically(path, "".join(json.dumps({"role": t.role, "content": t.content, "ts": now})
                                   + "\n" for t in turns))


@dataclass
class ResetPolicy:
    daily_reset_hour: int | None = None
    idle_timeout_minutes: float | None = None
    ended_transcript_days: float = 30.0
    """How long an ended session's transcript is kept."""

    def expired(self, entry: SessionEntry, now: float) -> bool:
        if self.idle_timeout_minutes and now - entry.updated_at > self.idle_timeout_minutes * 60:
            return True
        if self.daily_reset_hour is not None:
            current = datetime.fromtimestamp(now)
            boundary = current.replace(hour=self.daily_reset_hour, minute=0, second=0, microsecond=0)
            if boundary > current:
                boundary -= timedelta(days=1)
            return entry.updated_at < boundary.timestamp()
        return False


@dataclass
class Session:
    key: str
    entry: SessionEntry
    turns: list[ChatMessage] = field(default_factory=list)


class SessionStore:
    def __init__(self, directory: Path, reset: ResetPolicy | None = None):
        self.directory = directory
        self.reset = reset or ResetPolicy()
        self._index_path = directory / "sessions.json"
        self._entries: dict[str, SessionEntry] | None = None
        self._cache: dict[str, Session] = {}
        self._index_lock = asyncio.Lock()
        self._dirty_since: float | None = None
        self._unsynced = FsyncQueue()

    def _index(self) -> dict[str, SessionEntry]:
        if self._entries is None:
            self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
            try:
                raw = json.loads(self._index_path.read_text())
                self._entries = {k: SessionEntry(**v) for k, v in raw.items()}
            except FileNotFoundError:
                self._entries = {}
            except (ValueError, TypeError) as exc:
                backup = self._index_path.with_suffix(f".corrupt-{int(time.time())}")
                self._index_path.rename(backup)
                log.error("sessions_index_corrupt moved_to=%s error=%s", backup, exc)
                self._entries = {}
        return self._entries

    def _save_index(self) -> None:
        write_json_atomically(self._index_path, {k: asdict(v) for k, v in self._index().items()})
        self._dirty_since = None

    def transcript_path(self, entry: SessionEntry) -> Path:
        return self.directory / f"{entry.session_id}.jsonl"

    def lock(self, entry: SessionEntry) -> SessionLock:
        return SessionLock(self.directory / f"{entry.session_id}.lock")

    async def open(self, key: str, channel: str = "", chat_type: str = "direct") -> Session:
        """The live session for ``key``, starting a new one when none exists or it expired."""
        async with self._index_lock:
            entries = self._index()
            entry = entries.get(key)
            if entry is None or self.reset.expired(entry, time.time()):
                ended = entry
                entry = entries[key] = SessionEntry.new(channel, chat_type)
                self._cache.pop(key, None)
                self._save_index()
                if ended is not None:  # a first message starts a session; only an end prunes
                    log.info("session_expired key=%s session=%s", key, ended.session_id)
                    await asyncio.to_thread(self._remove_old_transcripts)
            session = self._cache.get(key)
            if session is None or session.entry.session_id != entry.session_id:
                turns = [ChatMessage(r["role"], r["content"])
                         for r in read_transcript(self.transcript_path(entry))
                         if r.get("role") in ("user", "assistant")][-KEPT_TURNS:]
                session = self._cache[key] = Session(key, entry, turns)
            return session

    async def reset_session(self, key: str) -> Session:
        """``/new``: a fresh session id for ``key``; the old transcript stays on disk."""
        async with self._index_lock:
            old = self._index().get(key)
            entry = SessionEntry.new(old.channel if old else "", old.chat_type if old else "direct")
            if old is not None:
                entry.model_override = old.model_override
            self._index()[key] = entry
            self._save_index()
            await asyncio.to_thread(self._remove_old_transcripts)
            session = self._cache[key] = Session(key, entry)
            return session

    def _remove_old_transcripts(self) -> None:
        """Transcripts of sessions no key uses any more, untouched for longer than the policy
        keeps them (the live sessions' are bounded by ``KEPT_TURNS``)."""
        live = {entry.session_id for entry in self._index().values()}
        cutoff = time.time() - self.reset.ended_transcript_days * 86400
        for path in self.directory.glob("*.jsonl"):
            try:
                if path.stem not in live and path.stat().st_mtime < cutoff:
                    path.unlink()
                    log.info("session_transcript_removed file=%s", path.name)
            except OSError as exc:  # another process, a permission: tried again at the next end
                log.warning("session_transcript_not_removed file=%s error=%r", path.name, exc)

    async def append(self, session: Session, turns: list[ChatMessage]) -> None:
        """Append turns under the session's lock (fsynced just after, ``fsync_queue.py``) and
        record them in the session."""
        lines = "".join(json.dumps({"role": t.role, "content": t.content, "ts": time.time()}) + "\n"
                        for t in turns).encode()
        path = self.transcript_path(session.entry)
        async with self.lock(session.entry):
            append_bytes(path, lines)
            session.turns.extend(turns)
            if len(session.turns) > 2 * KEPT_TURNS:
                del session.turns[:-KEPT_TURNS]
                _write_transcript(path, session.turns)
        self._unsynced.mark(path)
        await self.touch(session, structural=False)

    async def replace(self, session: Session, turns: list[ChatMessage], summary: str) -> None:
        """After compaction: rewrite the transcript atomically and count the compaction."""
        async with self.lock(session.entry):
            _write_transcript(self.transcript_path(session.entry), turns)
        session.turns[:] = turns
        session.entry.summary = summary
        session.entry.compaction_count += 1
        await self.touch(session)

    async def touch(self, session: Session, structural: bool = True) -> None:
        """Record activity; the index is saved now when ``structural``, else within a second."""
        async with self._index_lock:
            session.entry.updated_at = time.time()
            self._index()[session.key] = session.entry
            now = time.monotonic()
            if self._dirty_since is None:
                self._dirty_since = now
            if structural or now - self._dirty_since >= INDEX_FLUSH_SECONDS:
                await asyncio.to_thread(self._save_index)

    async def close(self) -> None:
        await self._unsynced.flushed()
        async with self._index_lock:
            if self._dirty_since is not None:
                self._save_index()
