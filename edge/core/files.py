"""Writing files so that a crash or a power cut leaves either the old content or the new one.

Every file the agent rewrites (config edits, pairing codes, session index and transcripts after
compaction, memory snapshots) goes through :func:`write_atomically`: a temporary file in the same
directory, fsync, rename over the target, fsync of the directory (so the rename itself survives
a power cut). On any failure the temporary file is removed and the target is untouched.

>>> import tempfile, pathlib
>>> target = pathlib.Path(tempfile.mkdtemp()) / "state.json"
>>> write_atomically(target, '{"ok": true}')
>>> target.read_text(), oct(target.stat().st_mode & 0o777)
('{"ok": true}', '0o600')
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path


def write_atomically(path: Path, content: str | bytes, mode: int = 0o600, *,
                     durable: bool = True) -> None:
    """Replace ``path`` with ``content`` (text is UTF-8) and permission bits ``mode``.
    ``durable=False`` skips the fsyncs: the new content is what any process reads from now on
    (a crash of this one included), and :func:`make_durable` later makes it survive a power cut;
    for a hot path whose caller waits for that off the event loop (the Telegram offset)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = content.encode("utf-8") if isinstance(content, str) else content
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        try:
            os.fchmod(fd, mode)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    if durable:
        fsync_directory(path.parent)


def make_durable(path: Path) -> None:
    """What ``write_atomically(..., durable=False)`` left to do: fsync the file and the rename."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    fsync_directory(Path(path).parent)


def write_json_atomically(path: Path, data: object, mode: int = 0o600) -> None:
    write_atomically(path, json.dumps(data, indent=1, sort_keys=True), mode)


def fsync_directory(directory: Path) -> None:
    """Make a rename or a new file in ``directory`` durable (a no-op where unsupported)."""
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def create_private(path: Path) -> int:
    """The descriptor of a new file at ``path``, mode 0600, open for writing (never an existing
    file: ``FileExistsError``)."""
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
