"""The aarch64 kernel guest: Debian's arm64 kernel in ``qemu-system-aarch64`` (virt machine, TCG)
with gpio-sim, whose root is the 64-bit Pi OS userspace of tests/userspace (read-only 9p, tmpfs
overlay) and whose venv holds the project with the aarch64 lgpio wheel.

Python under full-system TCG is slow (every process start costs seconds), so this guest runs no
command server: one shell script (guest_aarch64.sh) does the whole scenario around a single
``edge-cli run`` and writes what it saw to the mailbox, which the host then reads.

The venv is built once under qemu-user in the cached userspace, at ``/opt/edge-kernel/<key>``,
keyed by pyproject.toml (dependencies, entry points); the project is installed editable from
``/opt/edge-kernel/<key>/src``, and the guest mounts the checkout itself there (9p tag
``project``), so the code under test is always the checkout's.

Example (builds and boots, so not a doctest)::

    run = run_scenario(prepare_image(arch="arm64"), prepare_root(), workdir)
    run.rc, run.results["led_after_press"]  # 0, "1"
"""

from __future__ import annotations

import compileall
import hashlib
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from tests.kernel.guest import log_tails
from tests.kernel.image import Image
from tests.setup_progress import SetUpStep, setting_up, wait_for_lock
from tests.userspace.checkout import copy_checkout
from tests.userspace.rootfs import Userspace
from tests.userspace.rootfs import prepare as prepare_userspace

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(__file__).resolve().with_name("guest_aarch64.sh")
QEMU = "qemu-system-aarch64"
VENV_RECIPE = "1"  # bump when the venv's build steps change
KEEP_VENVS = 3  # built venvs kept in the userspace (about 270 MB each)
PIP_CACHE = "/var/cache/edge-kernel-pip"  # inside the userspace, where the index allows caching
# the guest: a Pi 4's core (cortex-a72); one vCPU: on a loaded 2-core machine the agent was
# ready after 12-17 s with one and 21-26 s with two (TCG threads competing for the host's cores)
CPU, SMP, MEMORY_MB = "cortex-a72", 1, 1024


class Aarch64Error(RuntimeError):
    """The arm64 root, its venv or the guest could not be prepared or did not finish; the
    message says why (and carries the guest's logs)."""


@dataclass(frozen=True)
class Root:
    """The arm64 userspace with the kernel venv in it."""

    userspace: Userspace
    home: str  # /opt/edge-kernel/<key> inside: venv/ and src/ (where the checkout is mounted)

    @property
    def path(self) -> Path:
        return self.userspace.root

    @property
    def edge_cli(self) -> str:
        return f"{self.home}/venv/bin/edge-cli"

    @property
    def project(self) -> str:
        return f"{self.home}/src"


def venv_key(userspace: Userspace) -> str:
    recipe = b"\0".join([VENV_RECIPE.encode(), userspace.directory.name.encode(),
                         (ROOT / "pyproject.toml").read_bytes()])
    return hashlib.sha256(recipe).hexdigest()[:10]


def prepare_root() -> Root:
    """The arm64 userspace (built by tests/userspace/rootfs.py when not cached, about 6 minutes)
    and the venv in it (built under qemu-user when pyproject.toml changed, a few minutes)."""
    userspace = prepare_userspace("arm64")
    key = venv_key(userspace)
    root = Root(userspace, f"/opt/edge-kernel/{key}")
    home = userspace.root / root.home.lstrip("/")
    with open(userspace.directory / f".kernel-venv-{key}.lock", "w") as lock:
        wait_for_lock(lock, "the aarch64 guest's venv")
        if not (home / "complete").is_file():
            with setting_up("the aarch64 guest's venv (pip under qemu-user in the arm64 userspace)",
                            cached_in=home, takes="a few minutes when pyproject.toml changed"
                            ) as progress:
                _build_venv(userspace, root, home, progress)
    return root


def _build_venv(userspace: Userspace, root: Root, home: Path, progress: SetUpStep) -> None:
    """A venv with the project installed editable (its dependencies, the aarch64 lgpio wheel,
    edge-cli) from a copy of the checkout, which the guest hides under the checkout itself."""
    if home.exists():
        shutil.rmtree(home)
    progress.watch(home)
    started = time.monotonic()
    copy_checkout(home / "src", 0)
    with userspace.session() as session:
        session.run(f"python3 -m venv {root.home}/venv && {root.home}/venv/bin/pip install"
                    f" --quiet -e {root.project}", user="root", timeout=3000,
                    env={"PIP_CACHE_DIR": PIP_CACHE})  # root's: as root pip skips pi's
        probe = session.run(f"{root.home}/venv/bin/python -c 'import lgpio, gpiozero, edge;"
                            " print(lgpio.__file__)'", user="root")
    if "site-packages/lgpio" not in probe.stdout:
        raise Aarch64Error(f"the arm64 venv has no lgpio wheel: {probe.stdout}")
    (home / "build-seconds").write_text(f"{time.monotonic() - started:.0f}\n")
    (home / "complete").write_text(f"{(ROOT / 'pyproject.toml').stat().st_mtime}\n")
    # venvs for other pyproject.tomls (other branches share the cache): keep the newest few
    built = sorted(home.parent.glob("*/complete"), key=lambda p: p.stat().st_mtime)
    for stale in built[:-KEEP_VENVS]:
        shutil.rmtree(stale.parent)


@dataclass
class Run:
    """What one guest run left: the script's exit code, its key=value results and the logs."""

    rc: int | None  # the script's, None when it never finished
    results: dict[str, str]
    seconds: float  # QEMU start to power-off, wall
    workdir: Path

    def log(self, name: str) -> str:
        path = self.workdir / "mailbox" / name
        return path.read_text(errors="replace") if path.is_file() else ""

    def diagnostics(self, lines: int = 40) -> str:
        """The tails of the console, QEMU's output, /init's, the script's and the agent's logs."""
        mailbox = self.workdir / "mailbox"
        return log_tails([self.workdir / "console.log", self.workdir / "qemu.log",
                          *sorted(mailbox.glob("*.log")), *sorted(mailbox.glob("agent.*"))],
                         lines)


def command_line(image: Image, root: Root, workdir: Path) -> list[str]:
    append = ("console=ttyAMA0 quiet loglevel=3 panic=-1"
              f" edge_script=/mailbox/scenario.sh edge_project={root.project}")
    return [
        QEMU, "-machine", "virt", "-accel", "tcg", "-cpu", CPU, "-smp", str(SMP),
        "-m", str(MEMORY_MB), "-nodefaults", "-no-user-config", "-display", "none",
        "-no-reboot", "-serial", f"file:{workdir / 'console.log'}",
        "-kernel", str(image.kernel), "-initrd", str(image.initramfs), "-append", append,
        "-device", "virtio-rng-pci",
        "-virtfs", f"local,path={root.path},mount_tag=hostroot,security_model=none,readonly=on,"
                   "multidevs=remap",
        "-virtfs", f"local,path={workdir / 'mailbox'},mount_tag=mailbox,security_model=none,"
                   "multidevs=remap",
        "-virtfs", f"local,path={ROOT},mount_tag=project,security_model=none,readonly=on,"
                   "multidevs=remap",
    ]


def run_scenario(image: Image, root: Root, workdir: Path, config: str, env: dict[str, str],
                 timeout: float = 600) -> Run:
    """Boot the guest with guest_aarch64.sh as its work (``config`` is the agent's config.toml,
    ``env`` the script's ``scenario.env``), wait for it to power off, and return what it left."""
    if image.arch != "arm64":
        raise Aarch64Error(f"the aarch64 guest needs the arm64 kernel, not {image.version}")
    if not shutil.which(QEMU):
        raise Aarch64Error(f"{QEMU} is not installed: apt-get install qemu-system-arm"
                           " (see deploy/test-packages.txt)")
    # the checkout's own bytecode (CPython 3.11 on the host and in bookworm: the same format)
    # spares the guest compiling every module at each start from a read-only share
    compileall.compile_dir(ROOT / "edge", quiet=1)
    compileall.compile_dir(ROOT / "peripherals", quiet=1)
    mailbox = workdir / "mailbox"
    shutil.rmtree(mailbox, ignore_errors=True)
    mailbox.mkdir(parents=True)
    shutil.copyfile(SCRIPT, mailbox / "scenario.sh")
    (mailbox / "config.toml").write_text(config)
    variables = {"EDGE_CLI": root.edge_cli, **env}
    (mailbox / "scenario.env").write_text("".join(f"{k}='{v}'\n" for k, v in variables.items()))
    started = time.monotonic()
    with open(workdir / "qemu.log", "wb") as log:
        qemu = subprocess.Popen(command_line(image, root, workdir), stdin=subprocess.DEVNULL,
                                stdout=log, stderr=subprocess.STDOUT)
    try:
        qemu.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        qemu.kill()
        qemu.wait(timeout=10)
    seconds = time.monotonic() - started
    results = {}
    for line in (mailbox / "results").read_text().splitlines() if \
            (mailbox / "results").is_file() else []:
        key, _, value = line.partition("=")
        results[key] = value
    rc_file = mailbox / "rc"
    rc = int(rc_file.read_text()) if rc_file.is_file() else None
    return Run(rc, results, seconds, workdir)
