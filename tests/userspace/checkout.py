"""A clean copy of this checkout inside a userspace, as a user's ``git clone`` would have it:
the files git tracks plus new ones it does not ignore (so an uncommitted change is tested too),
never ``.venv``, ``build`` or caches."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def project_files(root: Path = ROOT) -> list[str]:
    result = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=root, capture_output=True, text=True, check=True)
    return sorted(name for name in result.stdout.split("\0")
                  if name and (root / name).is_file())  # a deleted file is still in the index


def copy_checkout(target: Path, owner: int, root: Path = ROOT) -> None:
    """Copy the project to ``target`` (a fresh directory) owned by uid/gid ``owner``."""
    if target.exists():
        shutil.rmtree(target)
    for name in project_files(root):
        destination = target / name
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / name, destination)
    for path in [target, *target.rglob("*")]:
        os.lchown(path, owner, owner)
