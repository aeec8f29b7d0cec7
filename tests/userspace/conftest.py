"""One Raspberry Pi OS userspace per architecture for the session, and this checkout copied into
it as ``/home/pi/edge-agent`` where the README's ``make run`` is run once per module; every test
here is ``userspace``.

Nothing is skipped: without debootstrap, qemu-user, binfmt_misc or the network the tests fail
and say why (:class:`tests.userspace.rootfs.UserspaceError`).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.setup_progress import setting_up, shown
from tests.userspace.checkout import copy_checkout
from tests.userspace.rootfs import PIP_CACHE, UID, Session, Userspace, prepare

HERE = Path(__file__).resolve().parent
PROJECT = "/home/pi/edge-agent"
"""Where the checkout is, inside the userspace."""
CHAT = "/gpio led on\n/pins\n"
"""The README's first piped commands."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in item.path.parents:
            item.add_marker(pytest.mark.userspace)


@dataclass
class SetUp:
    """A userspace session with the project set up by ``make run``, and what that printed."""

    session: Session
    make_run_stdout: str
    make_run_stderr: str

    def cli(self, args: str, *, env: dict[str, str] | None = None, input: str | None = None,
            check: bool = True, timeout: float = 1200) -> tuple[int, str, str]:
        result = self.session.run(f".venv/bin/edge-cli {args}", cwd=PROJECT, env=env,
                                  input=input, check=check, timeout=timeout)
        return result.returncode, result.stdout, result.stderr


def set_up(userspace: Userspace) -> Iterator[SetUp]:
    """A fresh copy of the checkout (no .venv: ``make run`` makes it, as on a new Pi) and the
    README's ``printf '/gpio led on\\n/pins\\n' | make run``, as the user ``pi``; the state
    directory starts empty."""
    copy_checkout(userspace.root / PROJECT.lstrip("/"), UID)
    for state in ("home/pi/.local/state/edge-agent", "home/pi/.config/edge-agent"):
        target = userspace.root / state
        if target.exists():
            shutil.rmtree(target)
    pip_cache = userspace.root / PIP_CACHE.lstrip("/")
    with userspace.session() as session:
        with setting_up(f"the checkout in the {userspace.arch} userspace with the README's `make run`",
                        cached_in=None, takes=f"pip under qemu-user, minutes; its downloads are kept"
                        f" in {shown(pip_cache)}") as progress:
            progress.watch(userspace.root / PROJECT.lstrip("/") / ".venv")
            made = session.run("make run", cwd=PROJECT, input=CHAT, timeout=2400)
        yield SetUp(session, made.stdout, made.stderr)


@pytest.fixture(scope="module")
def arm64() -> Iterator[SetUp]:
    yield from set_up(prepare("arm64"))


@pytest.fixture(scope="module")
def armhf() -> Iterator[SetUp]:
    yield from set_up(prepare("armhf"))
