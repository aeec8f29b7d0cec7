"""Restore an archive onto a machine: its state files into the state directory, its config (and
environment file, when it holds one) where they were or where the command says.

Nothing is written until the whole archive has checked out (:func:`edge.backup.archive.unpack`,
into a scratch directory beside the state directory, so the final moves are renames on one file
system). A running agent's state is never written over: :class:`~edge.core.ownership.AgentRunning`
says to stop it first. A restored database replaces the file and any ``-wal``/``-shm`` beside it
(a stale journal would be replayed into the restored copy). Run as root, the config and the
environment file get the owner and group of the folder they land in (``/etc/edge-agent``: root,
group ``edge``); state files, and any folder made for them, get the state directory's
(``/var/lib/edge-agent``: the ``edge`` user's).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from edge.backup.archive import CONFIG_MEMBER, ENV_MEMBER, STATE_PREFIX, Manifest, unpack
from edge.core.ownership import LOCK_NAME, AgentRunning, holder
from edge.core.paths import SERVICE_RUNTIME_DIR
from edge.core.sqlite_files import JOURNAL_SUFFIXES

SERVICE_STATE_DIR = Path("/var/lib/edge-agent")


@dataclass(frozen=True)
class Restored:
    manifest: Manifest
    state_dir: Path
    config: Path | None
    env_file: Path | None
    files: int


def refuse_if_running(state_dir: Path) -> None:
    """AgentRunning when an agent holds ``state_dir`` (its lock, or the service's lock when
    ``state_dir`` is the service's)."""
    locks = [state_dir / LOCK_NAME]
    if state_dir.resolve() == SERVICE_STATE_DIR:
        locks.append(SERVICE_RUNTIME_DIR / LOCK_NAME)
    for lock in locks:
        if (pid := holder(lock)) is not None:
            raise AgentRunning(f"an agent is running on {state_dir} (pid {pid}); stop it first "
                               "(`sudo systemctl stop edge-agent`), or restore into another "
                               "directory with --state-dir and --config")


def _place(staged: Path, target: Path, mode: int, owner: Path) -> None:
    """Move ``staged`` to ``target`` with ``mode``; run as root, the file and any folder made
    for it get ``owner``'s owner and group."""
    as_root = os.geteuid() == 0
    missing = [folder for folder in target.parents if not folder.exists()]
    for folder in reversed(missing):
        folder.mkdir(mode=0o700)
        if as_root:
            os.chown(folder, owner.stat().st_uid, owner.stat().st_gid)
    os.chmod(staged, mode)
    if as_root:
        os.chown(staged, owner.stat().st_uid, owner.stat().st_gid)
    if staged.stat().st_dev == target.parent.stat().st_dev:
        os.replace(staged, target)
    else:
        shutil.move(staged, target)


def _nearest(path: Path) -> Path:
    """The nearest folder above ``path`` that exists (whose owner a restored file takes)."""
    return next(folder for folder in path.parents if folder.exists())


def restore_backup(archive: Path, *, state_dir: Path | None, config: Path | None,
                   env_file: Path | None, passphrase: str | None = None) -> Restored:
    """Restore ``archive``; a None target is where the archive's own manifest says the part came
    from (the same paths on a new Pi installed the same way)."""
    if state_dir is not None:
        refuse_if_running(state_dir)
        state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    scratch_parent = state_dir.parent if state_dir is not None else None
    with tempfile.TemporaryDirectory(prefix=".edge-restore-", dir=scratch_parent) as scratch:
        manifest = unpack(archive, Path(scratch), passphrase)
        state = state_dir or Path(manifest.state_dir)
        if state_dir is None:
            refuse_if_running(state)
            state.mkdir(parents=True, exist_ok=True, mode=0o700)
        config_target = config or (Path(manifest.config) if manifest.config else None)
        env_target = env_file or (Path(manifest.env_file) if manifest.env_file else None)
        placed_config = placed_env = None
        count = 0
        for entry in manifest.files:
            staged = Path(scratch) / entry.path
            if entry.path == CONFIG_MEMBER and config_target is not None:
                _place(staged, config_target, entry.mode, _nearest(config_target))
                placed_config = config_target
            elif entry.path == ENV_MEMBER and env_target is not None:
                _place(staged, env_target, entry.mode, _nearest(env_target))
                placed_env = env_target
            elif entry.path.startswith(STATE_PREFIX):
                target = state / entry.path.removeprefix(STATE_PREFIX)
                if entry.kind == "sqlite":
                    for suffix in JOURNAL_SUFFIXES:
                        Path(f"{target}{suffix}").unlink(missing_ok=True)
                _place(staged, target, entry.mode, state)
            else:
                continue
            count += 1
    return Restored(manifest, state, placed_config, placed_env, count)
