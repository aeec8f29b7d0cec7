"""Preparing a SQLite file before connecting to it, without ever holding a descriptor of it.

**The rule: never open or close a descriptor of a database file (or its ``-wal``, ``-shm``,
``-journal``) from Python in a process that may hold a connection to it; only SQLite opens it.**
On Linux, closing *any* descriptor of a file drops every POSIX lock the process holds on that
file, including those of its SQLite connections (sqlite.org/howtocorrupt.html, 2.2). The agent
then no longer holds its shared lock on the database; the next process to close (``edge-cli
memory`` beside it) takes itself for the last connection, checkpoints and deletes the WAL, and
everything the agent commits afterwards goes into an unlinked file: lost on a SIGKILL or a power
cut, and written over the other processes' commits at a clean stop (issue 23). SQLite's own
connections are safe among themselves (``sqlite3`` and ``aiosqlite`` use the same library): it
shares the locks of a file between a process's connections and defers closing a descriptor
while another connection holds locks on that file.

So permission bits are set by path (``os.chmod``, no descriptor), and a file that does not exist
yet is created under a temporary name and linked into place only once its descriptor is closed:
no connection can ever be holding the inode whose descriptor is closed. Call
:func:`prepare_sqlite_file` before every connection to a database the project writes (memory
today; sensor history, an audit trail...), and nothing else on the file.

>>> import tempfile, pathlib, sqlite3
>>> path = pathlib.Path(tempfile.mkdtemp()) / "state" / "store.db"
>>> prepare_sqlite_file(path)
>>> oct(path.stat().st_mode & 0o777), oct(path.parent.stat().st_mode & 0o777)
('0o600', '0o700')
>>> db = sqlite3.connect(path, isolation_level=None)
>>> db.execute("PRAGMA journal_mode = WAL").fetchall()
[('wal',)]
>>> db.execute("CREATE TABLE t (x)").fetchall()
[]
>>> oct(pathlib.Path(f"{path}-wal").stat().st_mode & 0o777)
'0o600'
>>> db.close()
"""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from pathlib import Path

PRIVATE = 0o600
JOURNAL_SUFFIXES = ("-wal", "-shm", "-journal")
"""SQLite creates these with the database file's own mode."""


def prepare_sqlite_file(path: Path, mode: int = PRIVATE, directory_mode: int = 0o700) -> None:
    """Make ``path`` ready for a first connection: its directory created with ``directory_mode``
    if missing, the file created empty with ``mode`` if missing, else ``mode`` set on it and on
    any journal file beside it (an older version, or a looser umask, may have left them readable).

    Opens no descriptor of an existing file, so it is safe beside a live connection to it;
    raises OSError when the directory or the file cannot be made (or their modes set)."""
    path = Path(path)
    if not path.parent.is_dir():
        path.parent.mkdir(mode=directory_mode, parents=True, exist_ok=True)
        os.chmod(path.parent, directory_mode)  # whatever the umask
    if not path.exists():
        _create(path, mode)
    for file in (path, *(Path(f"{path}{suffix}") for suffix in JOURNAL_SUFFIXES)):
        try:
            if file.stat().st_mode & 0o777 != mode:
                os.chmod(file, mode)
        except FileNotFoundError:
            pass


def _create(path: Path, mode: int) -> None:
    """An empty ``path`` with ``mode`` (whatever the umask), unless someone made it meanwhile.
    The new file's only descriptor is closed before the file has its name."""
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".new")
    try:
        os.close(fd)
        os.chmod(temporary, mode)
        try:
            os.link(temporary, path)  # fails, rather than replacing, when the file exists now
        except FileExistsError:
            pass
        except OSError as exc:
            if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOSYS):
                raise
            # no hard links here (vfat): a new inode, named from the start, that nobody holds
            # unless they opened it in the instant between these two calls
            with contextlib.suppress(FileExistsError):
                os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, mode))
    finally:
        Path(temporary).unlink(missing_ok=True)
