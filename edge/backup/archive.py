"""Create and check a backup archive: a tar.gz whose first member, ``manifest.json``, lists every
other member with its size, SHA-256 and mode, and says which edge-agent on which host wrote it::

    manifest.json           format, version, created, host, secrets, where each part came from
    config/config.toml      the config the agent ran with (always: it is what the agent runs)
    config/env              the environment file (/etc/edge-agent/env), only with --secrets
    state/audit.db ...      the state directory's files, as :mod:`edge.backup.contents` declares

A database is copied through SQLite's online backup API (``sqlite3.Connection.backup``) from a
read-only connection, so a running agent keeps writing and the copy is one consistent moment of
it; the copy is switched to a rollback journal so it is one self-contained file. Other files are
written atomically by the agent (rename), so copying them reads a whole version.

An archive is written 0600 (it may hold the config's inline secrets) next to its destination
and renamed into place, so a half-written archive is never left under the final name.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import socket
import sqlite3
import tarfile
import tempfile
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any

from edge import __version__
from edge.backup.contents import classify
from edge.backup.sealing import is_sealed, open_sealed_file, seal_file
from edge.core.exc import EXIT_USAGE, EdgeError

FORMAT = 1
MANIFEST = "manifest.json"
CONFIG_MEMBER = "config/config.toml"
ENV_MEMBER = "config/env"
STATE_PREFIX = "state/"
CHUNK = 1 << 20
OPENED = ".opened.tar.gz"
"""A sealed archive, opened, while it is unpacked (no member has this name)."""


class BackupInvalid(EdgeError, ValueError):
    """Not a backup archive, or one altered since it was written: exit 2."""

    exit_code = EXIT_USAGE


@dataclass(frozen=True)
class Member:
    path: str
    kind: str
    size: int
    sha256: str
    mode: int


@dataclass
class Manifest:
    version: str
    created: str
    host: str
    secrets: bool
    state_dir: str
    config: str | None
    env_file: str | None
    files: list[Member] = field(default_factory=list)
    format: int = FORMAT

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, text: bytes) -> Manifest:
        try:
            data = json.loads(text)
            files = [Member(**entry) for entry in data.pop("files")]
            manifest = cls(**data, files=files)
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            raise BackupInvalid(f"the archive's manifest is not one edge-agent writes ({exc})") from None
        if manifest.format != FORMAT:
            raise BackupInvalid(f"the archive is in format {manifest.format}; this edge-agent "
                                f"({__version__}) reads format {FORMAT}: restore it with a newer one")
        return manifest

    def member(self, path: str) -> Member | None:
        return next((m for m in self.files if m.path == path), None)


def digest(path: Path) -> str:
    sha = hashlib.sha256()
    with path.open("rb") as source:
        while chunk := source.read(CHUNK):
            sha.update(chunk)
    return sha.hexdigest()


def copy_database(source: Path, target: Path) -> None:
    """A consistent copy of the database at ``source`` through SQLite's backup API, read-only
    (no journal file is made beside a running agent's database), as one self-contained file."""
    reader = sqlite3.connect(f"{source.resolve().as_uri()}?mode=ro", uri=True)
    writer = sqlite3.connect(target)
    try:
        reader.backup(writer)
        writer.execute("PRAGMA journal_mode = DELETE")
    finally:
        writer.close()
        reader.close()


def state_files(state_dir: Path, secrets: bool) -> list[tuple[str, str]]:
    """The files of ``state_dir`` an archive takes, as (relative path, kind), sorted.
    LookupError for a file :mod:`edge.backup.contents` does not declare."""
    found: list[tuple[str, str]] = []
    for path in sorted(state_dir.rglob("*")):
        if not path.is_file() or path.is_symlink():
            continue
        relative = path.relative_to(state_dir).as_posix()
        kept = classify(relative)
        if kept is not None and (secrets or not kept.secret):
            found.append((relative, "sqlite" if relative.endswith(".db") else kept.kind))
    return found


def default_name(now: datetime | None = None, sealed: bool = False) -> str:
    """``edge-backup-HOST-YYYYmmdd-HHMMSS.tar.gz`` (``.sealed`` after it when sealed)."""
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%d-%H%M%S")
    return f"edge-backup-{socket.gethostname()}-{stamp}.tar.gz" + (".sealed" if sealed else "")


def create_backup(destination: Path, *, state_dir: Path, config: Path | None,
                  env_file: Path | None, secrets: bool = False,
                  passphrase: str | None = None) -> Manifest:
    """Write an archive of ``state_dir`` and ``config`` (and ``env_file`` with ``secrets``) to
    ``destination``, sealed with ``passphrase`` when one is given; returns its manifest."""
    destination.parent.mkdir(parents=True, exist_ok=True)
    manifest = Manifest(__version__, datetime.now(UTC).isoformat(timespec="seconds"),
                        socket.gethostname(), secrets, str(state_dir),
                        str(config) if config else None, None)
    with tempfile.TemporaryDirectory(prefix=".edge-backup-", dir=destination.parent) as scratch:
        staged = Path(scratch)
        parts: list[tuple[str, Path, str, int]] = []  # member, staged copy, kind, mode
        if config is not None:
            parts.append((CONFIG_MEMBER, config, "file", config.stat().st_mode & 0o777))
        if secrets and env_file is not None and env_file.is_file():
            manifest.env_file = str(env_file)
            parts.append((ENV_MEMBER, env_file, "file", env_file.stat().st_mode & 0o777))
        if state_dir.is_dir():
            for relative, kind in state_files(state_dir, secrets):
                source = state_dir / relative
                mode = source.stat().st_mode & 0o777
                if kind == "sqlite":
                    copy = staged / f"{len(parts)}.db"
                    copy_database(source, copy)
                    source = copy
                parts.append((STATE_PREFIX + relative, source, kind, mode))
        for member, source, kind, mode in parts:
            manifest.files.append(Member(member, kind, source.stat().st_size, digest(source), mode))
        packed = staged / "archive.tar.gz"
        with tarfile.open(packed, "w:gz", compresslevel=6) as tar:
            text = json.dumps(manifest.as_dict(), indent=2).encode()
            info = tarfile.TarInfo(MANIFEST)
            info.size, info.mode, info.mtime = len(text), 0o600, int(datetime.now(UTC).timestamp())
            tar.addfile(info, io.BytesIO(text))
            for (member, source, _kind, _mode), entry in zip(parts, manifest.files, strict=True):
                info = tarfile.TarInfo(member)
                info.size, info.mode, info.mtime = entry.size, entry.mode, int(source.stat().st_mtime)
                with source.open("rb") as content:
                    tar.addfile(info, content)
        if passphrase is not None:
            seal_file(packed, staged / "archive.sealed", passphrase)
            packed = staged / "archive.sealed"
        os.chmod(packed, 0o600)
        os.replace(packed, destination)
    return manifest


def _tar(archive: Path, passphrase: str | None, scratch: Path) -> tarfile.TarFile:
    """``archive`` open for reading; a sealed one is opened into ``scratch`` first."""
    with archive.open("rb") as head:
        sealed = is_sealed(head.read(64))
    try:
        if not sealed:
            return tarfile.open(archive, "r:gz")
        if passphrase is None:
            raise BackupInvalid(f"{archive} is sealed with a passphrase: give it with "
                                "--passphrase-file, or as EDGE_BACKUP__PASSPHRASE")
        opened = scratch / OPENED
        open_sealed_file(archive, opened, passphrase)
        return tarfile.open(opened, "r:gz")
    except (tarfile.TarError, EOFError, OSError) as exc:
        if isinstance(exc, FileNotFoundError | PermissionError | IsADirectoryError):
            raise
        raise BackupInvalid(f"{archive} is not a backup archive ({exc}); give a file "
                            "`edge-cli backup create` wrote") from None


def unpack(archive: Path, into: Path, passphrase: str | None = None) -> Manifest:
    """Extract ``archive`` into ``into``, checking every member against the manifest (name,
    size, SHA-256, nothing more and nothing less) and every database with ``PRAGMA
    integrity_check``; BackupInvalid naming the first member that fails."""
    into.mkdir(parents=True, exist_ok=True)
    with _tar(archive, passphrase, into) as tar:
        try:
            first = tar.next()
            if first is None or first.name != MANIFEST or not first.isfile():
                raise BackupInvalid(f"{archive} has no manifest: not an archive edge-cli backup wrote")
            handle = tar.extractfile(first)
            assert handle is not None
            manifest = Manifest.from_json(handle.read())
            expected = {m.path: m for m in manifest.files}
            seen: set[str] = set()
            for info in tar:
                if info is first:  # iterating starts again from the first member
                    continue
                entry = expected.get(info.name)
                if entry is None or info.name in seen or not info.isfile():
                    raise BackupInvalid(f"{archive}: {info.name} is not in its manifest (altered?)")
                if PurePosixPath(info.name).is_absolute() or ".." in PurePosixPath(info.name).parts \
                        or not info.name.startswith((STATE_PREFIX, "config/")):
                    raise BackupInvalid(f"{archive}: {info.name} points outside the archive")
                seen.add(info.name)
                target = into / info.name
                target.parent.mkdir(parents=True, exist_ok=True)
                content = tar.extractfile(info)
                assert content is not None
                with target.open("wb") as out:
                    shutil.copyfileobj(content, out, CHUNK)
                if target.stat().st_size != entry.size or digest(target) != entry.sha256:
                    raise BackupInvalid(f"{archive}: {info.name} does not match its manifest's "
                                        "size and SHA-256: the archive was altered or damaged")
        except (tarfile.TarError, EOFError, OSError, ValueError) as exc:
            if isinstance(exc, BackupInvalid):
                raise
            raise BackupInvalid(f"{archive} is damaged ({exc})") from None
    (into / OPENED).unlink(missing_ok=True)
    if missing := sorted(set(expected) - seen):
        raise BackupInvalid(f"{archive} lacks {', '.join(missing)} that its manifest lists")
    for entry in manifest.files:
        if entry.kind == "sqlite":
            check_database(into / entry.path, entry.path)
    return manifest


def check_database(path: Path, name: str) -> None:
    """BackupInvalid unless the database at ``path`` passes ``PRAGMA integrity_check``."""
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        try:
            result = [row[0] for row in db.execute("PRAGMA integrity_check")]
        finally:
            db.close()
    except sqlite3.DatabaseError as exc:
        result = [str(exc)]
    if result != ["ok"]:
        raise BackupInvalid(f"{name} fails SQLite's integrity check: {'; '.join(result[:3])}")


def verify_backup(archive: Path, passphrase: str | None = None) -> Manifest:
    """The manifest of ``archive`` once every member and database checked out."""
    with tempfile.TemporaryDirectory(prefix="edge-backup-verify-") as scratch:
        return unpack(archive, Path(scratch), passphrase)
