"""One owner of the hardware: the running agent holds a lock file next to its control socket
(``agent.lock``, readable by everyone), so any process can tell that an agent is running
without being able to reach its socket, and nothing else opens a board that agent owns.

The lock is an ``flock`` on an open file: it goes away with the process, however it dies
(SIGKILL, a power cut), so a stale file never blocks the next start.

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "agent.lock"
>>> lock = AgentLock.acquire(path)
>>> holder(path) == os.getpid()
True
>>> lock.release(); holder(path) is None
True
"""

from __future__ import annotations

import errno
import fcntl
import os
from collections.abc import Iterable
from pathlib import Path

from edge.core.exc import EdgeError

LOCK_NAME = "agent.lock"


class AgentRunning(EdgeError):
    """Another agent holds the hardware (exit 1)."""


class AgentLock:
    def __init__(self, path: Path, fd: int):
        self.path = path
        self._fd: int | None = fd

    @classmethod
    def acquire(cls, path: Path) -> AgentLock:
        """Take the lock or raise AgentRunning naming the holder; touches no board."""
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno not in (errno.EAGAIN, errno.EACCES):
                raise
            pid = holder(path)
            raise AgentRunning(f"another edge-agent is already running (pid {pid or '?'}, lock "
                               f"{path}); stop it first (`sudo systemctl stop edge-agent`), or use "
                               "`edge-cli status`") from None
        os.fchmod(fd, 0o644)  # readable by all, whatever the umask
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        return cls(path, fd)

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing drops the flock
            self._fd = None


def holder(path: Path) -> int | None:
    """The pid of the agent holding the lock at ``path``, or None when no agent holds it."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EACCES):
                return None
            text = os.read(fd, 32).decode(errors="replace").strip()
            return int(text) if text.isdigit() else -1
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def running_agent(lock_paths: Iterable[Path]) -> tuple[Path, int] | None:
    """The first lock held by a running agent, as (path, pid); None when none is."""
    for path in lock_paths:
        pid = holder(path)
        if pid is not None:
            return path, pid
    return None
