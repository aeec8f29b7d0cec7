"""A normal (non-editable) install of this checkout, for timing whole processes the way a person
who ran ``pip install edge-agent-pi`` would see them.

The project is built into a wheel (``pip wheel --no-deps`` of a copy of its sources) and
installed into a scratch venv under ``~/.cache/edge-agent-bench/`` together with its dependencies
pinned to the versions the running venv holds (its ``pip freeze`` as constraints, so the figures
compare like with like). The venv is rebuilt only when the sources, ``pyproject.toml``, those
versions or this recipe change (a hash of them names it); the first build takes a minute or two.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("edge", "peripherals")
PROJECT = "edge-agent-pi"
KEPT = 3
"""Built venvs kept besides the one being built (the most recently built)."""


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "edge-agent-bench"


def pinned_versions(python: str = sys.executable) -> str:
    """The running venv's ``pip freeze`` without the project itself (an editable line)."""
    frozen = subprocess.run([python, "-m", "pip", "freeze", "--exclude-editable"],
                            capture_output=True, text=True, check=True).stdout
    return "".join(line + "\n" for line in frozen.splitlines()
                   if line and not line.startswith("#") and not line.lower().startswith(PROJECT))


def wheel_sources() -> list[Path]:
    """What goes into the wheel: the packages' files, the ``edge-cli`` script, pyproject.toml and
    README.md."""
    files = [ROOT / "pyproject.toml", ROOT / "README.md", *(ROOT / "scripts").iterdir()]
    for package in PACKAGES:
        files += [p for p in (ROOT / package).rglob("*")
                  if p.is_file() and "__pycache__" not in p.parts]
    return sorted(files)


def source_hash(pins: str) -> str:
    """A hash of :func:`wheel_sources`, of the pinned dependency versions and of this recipe."""
    digest = hashlib.sha256(pins.encode() + Path(__file__).read_bytes())
    for path in wheel_sources():
        digest.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def staged(into: Path) -> Path:
    """:func:`wheel_sources` copied to ``into``, to build the wheel from: a build in the checkout
    reuses its ``build/lib``, where a module deleted since an earlier build still stands (the
    wheel then ships it)."""
    for path in wheel_sources():
        target = into / path.relative_to(ROOT)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
    return into


def installed_venv() -> Path:
    """The scratch venv's ``bin`` directory holding ``edge-cli`` from a wheel of this checkout,
    built now if the sources changed since the last one."""
    pins = pinned_versions()
    key = source_hash(pins)
    home = cache_dir()
    venv = home / f"venv-{key}"
    if (venv / ".complete").exists():
        return venv / "bin"
    print(f"  building a wheel of {ROOT.name} and installing it into {venv} "
          "(once per source change; takes a while)", flush=True)
    home.mkdir(parents=True, exist_ok=True)
    built = sorted(home.glob("venv-*/.complete"), key=lambda p: p.stat().st_mtime)
    for stale in built[:-KEPT]:  # other checkouts (worktrees) may still be timing the newer ones
        shutil.rmtree(stale.parent, ignore_errors=True)
    pip = [sys.executable, "-m", "pip"]
    quiet = ["--quiet", "--disable-pip-version-check"]

    def run(argv: list[str], cwd: str) -> None:  # pip's output only when it fails
        done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True)
        if done.returncode:
            raise RuntimeError(f"{' '.join(argv)} failed:\n{done.stdout}{done.stderr}")

    with tempfile.TemporaryDirectory() as tmp:
        wheels, constraints = Path(tmp) / "wheels", Path(tmp) / "pins.txt"
        constraints.write_text(pins)
        source = staged(Path(tmp) / "source")
        run([*pip, "wheel", *quiet, "--no-deps", "--no-build-isolation", "-w", str(wheels),
             str(source)], tmp)
        wheel = next(wheels.glob("*.whl"))
        run([sys.executable, "-m", "venv", str(venv)], tmp)
        run([str(venv / "bin" / "python"), "-m", "pip", "install", *quiet, "-c", str(constraints),
             str(wheel)], tmp)
    (venv / ".complete").touch()
    return venv / "bin"


if __name__ == "__main__":
    print(installed_venv())
