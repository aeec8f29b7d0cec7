"""A slow one-time test set-up says what it is doing, on the terminal, even while pytest captures
output: what it sets up and where it is cached for next time, a line at least every 30 s while
it runs (elapsed time, the current step, and bytes written where a directory grows), and how
long it took (or that it failed, and after how long).

A pytest plugin (``pytest_plugins`` in tests/conftest.py): it keeps the session's config, and
writes through the terminal reporter with capture suspended for the line. Outside pytest (a
harness module run as a script) the lines go to stderr. Callers use it only when the cached
result is missing, so a warm run says nothing. Example (it prints, so not a doctest)::

    with setting_up("Home Assistant 2024.3.3", cached_in=venv, takes="about 1 minute") as step:
        step.watch(venv)  # every tick says how many MB the venv holds by now
        step.say("step 1/2: creating the venv")
"""

from __future__ import annotations

import fcntl
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    import pytest

TICK_SECONDS = 30.0
"""The longest a running set-up stays silent."""

_config: pytest.Config | None = None
_writing = threading.Lock()  # one line at a time: the ticker thread and the set-up itself


def pytest_configure(config: pytest.Config) -> None:
    global _config
    _config = config


def pytest_unconfigure(config: pytest.Config) -> None:
    global _config
    if _config is config:
        _config = None


def say(line: str) -> None:
    """Write ``line`` on the terminal now, past pytest's capture (stderr outside pytest). The
    ticker thread suspends capture too: it runs only inside a set-up, within one test phase, and
    pytest switches capture only between phases."""
    with _writing:
        plugins = _config.pluginmanager if _config else None
        capture = plugins.getplugin("capturemanager") if plugins else None
        reporter = plugins.getplugin("terminalreporter") if plugins else None
        if capture is None or reporter is None:
            print(line, file=sys.stderr, flush=True)
            return
        with capture.global_and_fixture_disabled():
            reporter.ensure_newline()  # after a test's file name or node id
            if reporter._tw.width_of_current_line:  # after -q's progress dots
                reporter.write("\n")
            reporter.write_line(line)
            reporter.flush()  # before capture resumes, or the line lands in the capture


def elapsed(seconds: float) -> str:
    """``42s``, ``2m30s``, ``71m05s``."""
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes}m{rest:02d}s" if minutes else f"{rest}s"


def shown(path: Path | str) -> str:
    """A path as a user would type it: the home directory as ``~``."""
    home = str(Path.home())
    text = str(path)
    return "~" + text[len(home):] if text == home or text.startswith(home + os.sep) else text


def megabytes_in(directory: Path) -> str:
    """How much ``directory`` holds, e.g. ``312 MB in ~/.cache/edge-agent/...``."""
    total = 0
    for parent, _, files in os.walk(directory):
        for name in files:
            with suppress(OSError):  # written and removed under our feet
                total += os.lstat(os.path.join(parent, name)).st_size
    return f"{total / 1e6:.0f} MB in {shown(directory)}"


class SetUpStep:
    """The set-up in progress: :meth:`say` a step, :meth:`watch` a directory that grows, or
    set :attr:`progress` to any callable whose text each tick shows."""

    def __init__(self, what: str) -> None:
        self.what = what
        self.started = time.monotonic()
        self.step = ""
        self.progress: Callable[[], str] | None = None

    def elapsed(self) -> str:
        return elapsed(time.monotonic() - self.started)

    def say(self, step: str) -> None:
        """Name the current step (shown by every tick until the next one) and print it now."""
        self.step = step
        say(f"setting up {self.what}: {step} ({self.elapsed()})")

    def watch(self, directory: Path) -> None:
        """Each tick says how many bytes ``directory`` holds by then."""
        self.progress = lambda: megabytes_in(directory)

    def tick(self) -> None:
        parts = [f"still setting up {self.what}: {self.elapsed()}", self.step]
        if self.progress is not None:
            parts.append(self.progress())
        say(", ".join(part for part in parts if part))


@contextmanager
def setting_up(what: str, *, cached_in: Path | str | None, takes: str = "",
               interval: float = TICK_SECONDS) -> Iterator[SetUpStep]:
    """Announce the set-up of ``what`` (cached in ``cached_in`` for next time, ``takes`` the
    usual duration on a first run), tick every ``interval`` seconds while the block runs, and
    say how it ended; an exception is re-raised after its line."""
    step = SetUpStep(what)
    cache = f"cached in {shown(cached_in)} for next time" if cached_in else ""
    notes = "; ".join(note for note in (takes, cache) if note)
    say(f"setting up {what}" + (f" ({notes})" if notes else ""))
    done = threading.Event()

    def ticker() -> None:
        while not done.wait(interval):
            step.tick()

    thread = threading.Thread(target=ticker, name=f"setting up {what}", daemon=True)
    thread.start()
    failure: BaseException | None = None
    try:
        yield step
    except BaseException as error:
        failure = error
        raise
    finally:
        done.set()
        thread.join()
        say(f"set up {what} in {step.elapsed()}" if failure is None else
            f"setting up {what} failed after {step.elapsed()}: {_reason(failure)}")


def _reason(error: BaseException) -> str:
    """``ImageError: apt-get download failed ...``: the type and the first line of the message."""
    lines = str(error).splitlines()
    return f"{type(error).__name__}: {lines[0]}" if lines else type(error).__name__


def wait_for_lock(lock: IO[str], what: str) -> None:
    """Take ``lock`` (flock, exclusive); while another test run holds it, building ``what``,
    say so rather than wait in silence."""
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        with setting_up(f"{what} (waiting for another test run, which holds {shown(lock.name)})",
                        cached_in=None):
            fcntl.flock(lock, fcntl.LOCK_EX)
