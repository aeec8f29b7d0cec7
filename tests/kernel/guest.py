"""A QEMU guest with a real GPIO character device: the host's side of the harness.

The guest runs a Debian kernel whose gpio-sim module provides ``/dev/gpiochip0``, a 54-line chip
labelled ``pinctrl-bcm2711`` like a Pi 4's, and identifies as a Pi 4B in ``/proc/cpuinfo``. Its
root is the host's own ``/`` (read-only 9p, tmpfs overlay), so the project and its venv are at
the same paths. Commands go through a mailbox directory shared read-write over 9p, answered by
guest_server.py.

Example (boots a guest, so not a doctest)::

    with KernelGuest(prepare(), workdir) as guest:
        guest.set_pull(27, "pull-up")            # a button released
        assert guest.line_value(27) == 1
        guest.run(["python", "-c", "import lgpio"])  # -> {"rc": 0, "stdout": ...}
"""

from __future__ import annotations

import contextlib
import itertools
import json
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any, TypedDict, cast

from tests.kernel.image import Image

SERVER = Path(__file__).resolve().with_name("guest_server.py")
PROJECT = Path(__file__).resolve().parents[2]
PYTHON = PROJECT / ".venv" / "bin" / "python"
PULLS = ("pull-up", "pull-down")


def log_tails(paths: list[Path], lines: int) -> str:
    """The last ``lines`` of each file that exists, under its name: what a GuestError carries."""
    parts = []
    for path in paths:
        if path.is_file():
            tail = path.read_text(errors="replace").splitlines()[-lines:]
            parts.append(f"--- {path.name} ---\n" + "\n".join(tail))
    return "\n".join(parts) or "(no console output)"


class GuestError(RuntimeError):
    """The guest did not boot, died, or could not carry out a command; the message carries what
    the guest said (console, server log or the command's error)."""


class Completed(TypedDict):
    """A finished (or timed out) guest process, as ``run`` and ``wait`` return it."""

    rc: int | None  # None when it timed out
    timed_out: bool
    stdout: str
    stderr: str


class Watch:
    """A running linewatch over some lines; ``stop`` returns what it saw. linewatch polls in a
    tight loop, so the agent under test gets about half the guest's CPU while one runs."""

    def __init__(self, guest: KernelGuest, name: str, offsets: list[int]):
        self.guest, self.name, self.offsets = guest, name, offsets

    def stop(self) -> list[tuple[int, int, int]]:
        """End the watch; every level seen, the initial ones first, as (monotonic ns in the
        guest, line offset, value), in order."""
        self.guest.watches.discard(self)
        self.guest.signal(self.name, signal.SIGTERM)
        result = self.guest.wait(self.name, timeout=30)
        if result["rc"] != 0:
            raise GuestError(f"linewatch {self.offsets} ended with {result['rc']}:"
                             f" {result['stderr']}")
        seen = []
        for line in result["stdout"].splitlines():
            ns, index, value = (int(field) for field in line.split())
            seen.append((ns, self.offsets[index], value))
        return seen


class KernelGuest:
    """One booted guest; also a context manager (boot on enter, shutdown on exit)."""

    def __init__(self, image: Image, workdir: Path, memory_mb: int = 1024,
                 boot_timeout: float = 90.0):
        self.image, self.workdir = image, workdir
        self.memory_mb, self.boot_timeout = memory_mb, boot_timeout
        self.mailbox = workdir / "mailbox"
        self.console = workdir / "console.log"
        self.qemu_log = workdir / "qemu.log"
        self.proc: subprocess.Popen | None = None
        self.boot_seconds: float | None = None
        self._seq = itertools.count(1)
        self._seq_lock = threading.Lock()
        self._watch_names = itertools.count(1)
        self.watches: set[Watch] = set()  # running ones
        self._sim_dir: str | None = None

    def __enter__(self) -> KernelGuest:
        self.boot()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()

    # -- life cycle ------------------------------------------------------------------------

    def command_line(self) -> list[str]:
        append = ("console=ttyS0 quiet loglevel=3 panic=-1"
                  f" edge_python={PYTHON} edge_server={SERVER} edge_project={PROJECT}")
        return [
            "qemu-system-x86_64", "-machine", "q35", "-accel", "tcg", "-cpu", "max", "-smp", "1",
            "-m", str(self.memory_mb), "-nodefaults", "-no-user-config", "-display", "none",
            "-no-reboot", "-serial", f"file:{self.console}",
            "-kernel", str(self.image.kernel), "-initrd", str(self.image.initramfs),
            "-append", append,
            "-virtfs", "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,"
                       "multidevs=remap",
            "-virtfs", f"local,path={self.mailbox},mount_tag=mailbox,security_model=none,"
                       "multidevs=remap",
        ]

    def boot(self) -> None:
        """Start QEMU and wait until the guest's server is ready (about 7 s on a 2-core CI
        machine under TCG: 1-2 s QEMU and the kernel, 1 s /init, 2 s the server's Python)."""
        if not shutil.which("qemu-system-x86_64"):
            raise GuestError("qemu-system-x86_64 is not installed: apt-get install"
                             " qemu-system-x86 (see deploy/test-packages.txt)")
        if self.proc is not None:
            raise GuestError("the guest is already running")
        if not PYTHON.is_file():
            raise GuestError(f"{PYTHON} is missing: the guest runs the project's venv")
        shutil.rmtree(self.mailbox, ignore_errors=True)  # no stale ready.json or answers
        self.mailbox.mkdir(parents=True)
        started = time.monotonic()
        with open(self.qemu_log, "wb") as log:
            self.proc = subprocess.Popen(self.command_line(), stdin=subprocess.DEVNULL,
                                         stdout=log, stderr=subprocess.STDOUT)
        ready = self.mailbox / "ready.json"
        while not ready.exists():
            if self.proc.poll() is not None:
                code, self.proc = self.proc.returncode, None
                raise GuestError(f"the guest stopped during boot ({code})\n{self.diagnostics()}")
            if time.monotonic() - started > self.boot_timeout:
                self._kill()
                raise GuestError(f"the guest was not ready after {self.boot_timeout:.0f} s\n"
                                 f"{self.diagnostics()}")
            time.sleep(0.02)
        self.boot_seconds = time.monotonic() - started

    def shutdown(self) -> None:
        """Stop the server (its init then powers off), kill QEMU if it lingers."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            with contextlib.suppress(GuestError):
                self.request("exit", answer_within=10)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=15)
        self._kill()

    def _kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
        self.proc = None

    def diagnostics(self, lines: int = 30) -> str:
        """The tails of the console, QEMU's own output, /init's and the server's logs."""
        return log_tails([self.console, self.qemu_log, self.mailbox / "init.log",
                          self.mailbox / "server.log"], lines)

    # -- the mailbox -----------------------------------------------------------------------

    def request(self, op: str, answer_within: float = 30, **fields: Any) -> dict[str, Any]:
        """Send one command, wait up to ``answer_within`` s for its answer; GuestError on an
        error."""
        if self.proc is None:
            raise GuestError("the guest is not running: call boot() first")
        with self._seq_lock:
            seq = f"{next(self._seq):08d}"
        partial = self.mailbox / "cmd" / f".{seq}.partial"
        partial.write_text(json.dumps({"op": op, **fields}))
        partial.rename(self.mailbox / "cmd" / f"{seq}.json")
        answer = self.mailbox / "res" / f"{seq}.json"
        deadline = time.monotonic() + answer_within
        while not answer.exists():
            if self.proc.poll() is not None:
                raise GuestError(f"the guest died during {op} {fields}\n{self.diagnostics()}")
            if time.monotonic() > deadline:
                raise GuestError(f"no answer to {op} {fields} within {answer_within} s\n"
                                 f"{self.diagnostics()}")
            time.sleep(0.002)
        result = json.loads(answer.read_text())
        answer.unlink()
        if "error" in result:
            raise GuestError(f"{op} {fields} failed in the guest: {result['error']}")
        return result

    def run(self, argv: list[str], env: dict[str, str] | None = None, timeout: float = 60,
            user: int | None = None, cwd: str = "/") -> Completed:
        """Run a command to completion in the guest (as root, or as ``user``, a uid); ``env``
        goes over the base environment, whose PATH starts with the venv's bin."""
        return cast(Completed, self.request("run", answer_within=timeout + 30, argv=argv,
                                            env=env, cwd=cwd, timeout=timeout, user=user))

    def spawn(self, name: str, argv: list[str], env: dict[str, str] | None = None,
              cwd: str = "/", user: int | None = None) -> int:
        """Start a background process called ``name``; returns its pid in the guest."""
        return self.request("spawn", id=name, argv=argv, env=env, cwd=cwd, user=user)["pid"]

    def signal(self, name: str, signum: int) -> None:
        self.request("signal", id=name, signum=int(signum))

    def wait(self, name: str, timeout: float = 60) -> Completed:
        """Wait for a spawned process; rc is None (and it keeps running) if it outlives
        ``timeout``."""
        return cast(Completed, self.request("wait", answer_within=timeout + 30, id=name,
                                            timeout=timeout))

    def output(self, name: str) -> tuple[str, str]:
        """What a spawned process has written so far (read on the host from the share)."""
        procs = self.mailbox / "procs"
        return ((procs / f"{name}.out").read_text(errors="replace"),
                (procs / f"{name}.err").read_text(errors="replace"))

    def read(self, path: str) -> str:
        return self.request("read", path=path)["text"]

    def write(self, path: str, text: str) -> None:
        self.request("write", path=path, text=text)

    def chmod(self, path: str, mode: int) -> None:
        self.request("chmod", path=path, mode=mode)

    # -- the gpio-sim chip -----------------------------------------------------------------

    @property
    def sim_dir(self) -> str:
        """The chip's sysfs directory, /sys/devices/platform/gpio-sim.N/gpiochipM."""
        if self._sim_dir is None:
            found = self.request("glob", pattern="/sys/devices/platform/gpio-sim.*/gpiochip*")
            if len(found["paths"]) != 1:
                raise GuestError(f"expected one gpio-sim chip, found {found['paths']}")
            self._sim_dir = found["paths"][0]
        return self._sim_dir

    def value_path(self, offset: int) -> str:
        """Sysfs file with the level line ``offset`` is driven to (its pull when undriven)."""
        return f"{self.sim_dir}/sim_gpio{offset}/value"

    def pull_path(self, offset: int) -> str:
        return f"{self.sim_dir}/sim_gpio{offset}/pull"

    def line_value(self, offset: int) -> int:
        return int(self.read(self.value_path(offset)).strip())

    def set_pull(self, offset: int, pull: str) -> None:
        """Pull an input line up or down, as a button or sensor would; edges are delivered."""
        if pull not in PULLS:
            raise ValueError(f"pull must be one of {PULLS}, not {pull!r}")
        self.write(self.pull_path(offset), pull)

    def watch_lines(self, offsets: list[int]) -> Watch:
        """Start linewatch on ``offsets``; returns once their initial levels are recorded."""
        name = f"linewatch-{next(self._watch_names)}"
        self.spawn(name, [str(self.image.linewatch), *map(self.value_path, offsets)])
        watch = Watch(self, name, list(offsets))
        self.watches.add(watch)
        deadline = time.monotonic() + 30
        while len((output := self.output(name))[0].splitlines()) < len(offsets):
            if output[1] or time.monotonic() > deadline:
                watch.stop()
                raise GuestError(f"linewatch {offsets} did not start: {output}")
            time.sleep(0.005)
        return watch

    def stop_watches(self) -> None:
        """Stop watches still running: each keeps the guest's one CPU busy."""
        for watch in list(self.watches):
            with contextlib.suppress(GuestError):
                watch.stop()
