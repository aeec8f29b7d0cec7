"""A Raspberry Pi OS userspace on an x86_64 machine: Debian bookworm for ``arm64`` (64-bit Pi OS)
or ``armhf`` (32-bit), built with debootstrap from Debian's packages and run through qemu-user.

Built once per architecture and recipe, under a file lock, into
``${XDG_CACHE_HOME:-~/.cache}/edge-agent/userspace/<arch>-bookworm-<key>/``; a ``complete``
marker is written last, so an interrupted build is thrown away and redone; a build says on the
terminal what it is doing and how many MB it has written (tests/setup_progress.py). Commands run in a
chroot with ``/proc`` and ``/dev`` mounted for the session and unmounted after it; the host's CA
bundle, pip configuration and resolver are copied in, so pip reaches the same index as the host.

qemu-user runs foreign binaries only when binfmt_misc knows them. Machines that boot without
systemd register nothing when ``qemu-user-static`` is installed, so :func:`register_binfmt`
mounts binfmt_misc when needed and writes the package's own entries into the kernel; when that is
impossible (no root, no package) it raises :class:`UserspaceError` saying why: never a skip.

Example (debootstrap takes about 6 minutes on first use, so not a doctest)::

    userspace = prepare("arm64")
    with userspace.session() as session:
        session.run("python3 -c 'import platform; print(platform.machine())'").stdout  # aarch64
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import shutil
import subprocess
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.setup_progress import SetUpStep, setting_up, wait_for_lock

SUITE = "bookworm"  # what Raspberry Pi OS 12 is built on
DEFAULT_MIRROR = "http://deb.debian.org/debian"
# what the README's set-up needs on a fresh Pi OS Lite: Python with venv, make, and certificates
PACKAGES = ("python3", "python3-venv", "make", "ca-certificates")
USER = "pi"  # the user the README's commands run as, uid 1000 as on a Pi
UID = 1000
PIP_CACHE = "/var/cache/edge-agent-pip"  # inside: pip's downloads, kept for the next run
RECIPE_VERSION = "2"  # bump when the build steps below change what a userspace holds


@dataclass(frozen=True)
class Arch:
    debian: str  # debootstrap's --arch
    machine: str  # platform.machine() inside
    binfmt: str  # the qemu-user-static entry in /usr/lib/binfmt.d/


ARCHES = {
    "arm64": Arch("arm64", "aarch64", "qemu-aarch64"),
    "armhf": Arch("armhf", "armv7l", "qemu-arm"),
}
BINFMT_DIR = Path("/proc/sys/fs/binfmt_misc")
BINFMT_CONFS = Path("/usr/lib/binfmt.d")
HOST_CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
HOST_PIP_CONF = Path("/etc/pip.conf")
HOST_RESOLV = Path("/etc/resolv.conf")
# pip and proxy settings a user's shell would carry into the userspace (not PIP_FIND_LINKS and
# the like, which name host paths)
PASSED_ENV = ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_TRUSTED_HOST", "PIP_DEFAULT_TIMEOUT",
              "http_proxy", "https_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY")


class UserspaceError(RuntimeError):
    """The userspace could not be built or entered; the message says why and what to do."""


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "edge-agent" / "userspace"


# -- binfmt_misc ------------------------------------------------------------------------------

def register_binfmt(arch: str) -> None:
    """Make the kernel run ``arch``'s binaries through qemu-user-static (with the F flag, so the
    interpreter works inside a chroot); a no-op when the entry is already there and enabled."""
    entry = ARCHES[arch].binfmt
    conf = BINFMT_CONFS / f"{entry}.conf"
    if not conf.is_file():
        raise UserspaceError(f"{conf} is missing: install qemu-user-static"
                             " (deploy/test-packages.txt lists what the tests need)")
    if not (BINFMT_DIR / "register").exists():
        _mount_binfmt_misc()
    status = BINFMT_DIR / entry
    if status.is_file():
        text = status.read_text()
        if text.startswith("enabled") and re.search(r"^flags:.*F", text, re.MULTILINE):
            return
        _write_binfmt(BINFMT_DIR / entry, "-1", f"removing the stale entry {entry} ({text!r})")
    _write_binfmt(BINFMT_DIR / "register", conf.read_text().strip(), f"registering {conf}")
    if not status.is_file():
        raise UserspaceError(f"wrote {conf} to {BINFMT_DIR}/register but {status} did not appear")


def _mount_binfmt_misc() -> None:
    result = subprocess.run(["mount", "-t", "binfmt_misc", "binfmt_misc", str(BINFMT_DIR)],
                            capture_output=True, text=True)
    if result.returncode != 0 or not (BINFMT_DIR / "register").exists():
        raise UserspaceError(
            f"binfmt_misc is not mounted at {BINFMT_DIR} and mounting it failed"
            f" ({result.stderr.strip() or 'no register file after mount'}): run as root in a"
            " container or machine that allows it, or register qemu-user-static's entries by hand"
            f" (mount -t binfmt_misc binfmt_misc {BINFMT_DIR}; cat {BINFMT_CONFS}/qemu-aarch64.conf"
            f" > {BINFMT_DIR}/register)")


def _write_binfmt(path: Path, text: str, what: str) -> None:
    try:
        path.write_text(text)
    except OSError as error:
        raise UserspaceError(f"{what} failed: {error}; this needs root (uid {os.getuid()} here)"
                             f" with {BINFMT_DIR} writable") from None


# -- building ---------------------------------------------------------------------------------

def host_mirror() -> str:
    """The Debian archive the host's apt uses for bookworm (a local mirror or cache on some CI
    machines), else deb.debian.org; debootstrap must reach what apt reaches."""
    sources = [Path("/etc/apt/sources.list"), *sorted(Path("/etc/apt/sources.list.d").glob("*"))]
    for path in sources:
        try:
            text = path.read_text()
        except OSError:
            continue
        if path.suffix == ".sources":  # deb822 stanzas
            for stanza in re.split(r"\n\s*\n", text):
                uris = re.search(r"^URIs:\s*(\S+)", stanza, re.MULTILINE)
                suites = re.search(r"^Suites:(.*)$", stanza, re.MULTILINE)
                if uris and suites and SUITE in suites.group(1).split() and \
                        _is_debian_archive(uris.group(1)):
                    return uris.group(1).rstrip("/")
        else:
            for line in text.splitlines():
                words = re.sub(r"\[[^]]*\]", "", line.split("#")[0]).split()
                if len(words) >= 3 and words[0] == "deb" and words[2] == SUITE and \
                        _is_debian_archive(words[1]):
                    return words[1].rstrip("/")
    return DEFAULT_MIRROR


def _is_debian_archive(uri: str) -> bool:
    return uri.startswith("http") and uri.rstrip("/").endswith("/debian")


def _apt_proxy() -> str | None:
    """The host's apt proxy (Acquire::http::Proxy), which debootstrap honours as http_proxy."""
    if not shutil.which("apt-config"):
        return None
    result = subprocess.run(["apt-config", "shell", "PROXY", "Acquire::http::Proxy"],
                            capture_output=True, text=True)
    found = re.search(r"PROXY='([^']+)'", result.stdout)
    return found.group(1) if found else None


def recipe_key(mirror: str) -> str:
    """What the userspace is built from: a new key (a new directory) when any of it changes."""
    recipe = "\0".join([RECIPE_VERSION, SUITE, mirror, *PACKAGES, USER, str(UID)])
    return hashlib.sha256(recipe.encode()).hexdigest()[:10]


@dataclass(frozen=True)
class Userspace:
    """A built userspace: ``root`` is the chroot, ``arch`` a key of :data:`ARCHES`."""

    arch: str
    directory: Path

    @property
    def root(self) -> Path:
        return self.directory / "root"

    @property
    def machine(self) -> str:
        return ARCHES[self.arch].machine

    @contextmanager
    def session(self) -> Iterator[Session]:
        """``/proc`` and ``/dev`` mounted in the chroot, the host's network settings copied in;
        everything mounted is unmounted on the way out, even after a failure."""
        register_binfmt(self.arch)
        _copy_host_settings(self.root)
        _clear_old_tmp(self.root)
        mounted: list[Path] = []
        try:
            for source, target, args in _session_mounts(self.root):
                target.mkdir(parents=True, exist_ok=True)
                _mount([*args, source, str(target)], f"mounting {source} on {target}")
                mounted.append(target)
            yield Session(self)
        finally:
            for target in reversed(mounted):
                _umount(target)


TMP_KEPT_SECONDS = 3600
"""Entries of the userspace's ``/tmp`` older than this go when a session starts, as a Pi's
``systemd-tmpfiles`` ages its own: pip's build directories and the agents' scratch state dirs
(each with a copy of the embedding model) would otherwise pile up in the cache, run after run.
An hour, not all of it: another checkout's session (minutes long) may be using it right now."""


def _clear_old_tmp(root: Path, now: float | None = None) -> list[str]:
    """Remove what in ``root``'s ``/tmp`` has not changed for :data:`TMP_KEPT_SECONDS`; the
    names removed."""
    cutoff = (time.time() if now is None else now) - TMP_KEPT_SECONDS
    removed = []
    tmp = root / "tmp"
    for entry in tmp.iterdir() if tmp.is_dir() else ():
        if entry.lstat().st_mtime < cutoff:
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)
            removed.append(entry.name)
    return removed


def _session_mounts(root: Path) -> list[tuple[str, Path, list[str]]]:
    mounts = [("proc", root / "proc", ["-t", "proc"]), ("/dev", root / "dev", ["--bind"])]
    for sub in ("pts", "shm"):  # not carried by a plain bind of /dev
        if os.path.ismount(f"/dev/{sub}"):
            mounts.append((f"/dev/{sub}", root / "dev" / sub, ["--bind"]))
    return mounts


def _mount(args: list[str], what: str) -> None:
    result = subprocess.run(["mount", *args], capture_output=True, text=True)
    if result.returncode != 0:
        raise UserspaceError(f"{what} failed: {result.stderr.strip()} (mounting needs root)")


def _umount(target: Path) -> None:
    result = subprocess.run(["umount", str(target)], capture_output=True, text=True)
    if result.returncode != 0:  # something still holds it: detach it now, free it later
        subprocess.run(["umount", "-l", str(target)], capture_output=True, text=True)


def _mounts_under(directory: Path) -> list[Path]:
    """Mount points at or below ``directory``, deepest first (from /proc/self/mountinfo)."""
    prefix = str(directory.resolve())
    found = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        point = line.split()[4].replace("\\040", " ")
        if point == prefix or point.startswith(prefix + "/"):
            found.append(Path(point))
    return sorted(found, key=lambda p: len(p.parts), reverse=True)


def _remove_tree(directory: Path) -> None:
    """Delete a (partial) userspace; never while a mount (say, the host's /dev, bound in by an
    interrupted session or by debootstrap) is still inside it."""
    for point in _mounts_under(directory):
        _umount(point)
    left = _mounts_under(directory)
    if left:
        raise UserspaceError(f"cannot remove {directory}: still mounted there: {left}")
    shutil.rmtree(directory, ignore_errors=False)


def _copy_host_settings(root: Path) -> None:
    """The host's CA bundle (a proxy's CA may sign the package index's certificate here),
    pip configuration and resolver, into the userspace."""
    if HOST_CA_BUNDLE.is_file():
        target = root / "etc/ssl/certs/ca-certificates.crt"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.unlink(missing_ok=True)
        shutil.copyfile(HOST_CA_BUNDLE, target)
    if HOST_PIP_CONF.is_file():
        shutil.copyfile(HOST_PIP_CONF, root / "etc/pip.conf")
    if HOST_RESOLV.exists():
        target = root / "etc/resolv.conf"
        if target.is_symlink() or target.exists():
            target.unlink()
        shutil.copyfile(HOST_RESOLV, target)


class Session:
    """Commands in a mounted userspace, run through ``chroot`` as :data:`USER` (or root)."""

    def __init__(self, userspace: Userspace) -> None:
        self.userspace = userspace
        self.root = userspace.root

    def environment(self, user: str = USER, extra: Mapping[str, str] | None = None
                    ) -> dict[str, str]:
        home = "/root" if user == "root" else f"/home/{user}"
        env = {"HOME": home, "USER": user, "LOGNAME": user, "LANG": "C.UTF-8",
               "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
               "PIP_CERT": "/etc/ssl/certs/ca-certificates.crt",
               "SSL_CERT_FILE": "/etc/ssl/certs/ca-certificates.crt",
               # a pip cache kept in the userspace: a second run installs from it
               "PIP_CACHE_DIR": PIP_CACHE,
               "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
        env.update({k: os.environ[k] for k in PASSED_ENV if k in os.environ})
        env.update(extra or {})
        return env

    def run(self, script: str, *, cwd: str | None = None, user: str = USER,
            env: Mapping[str, str] | None = None, input: str | None = None,
            timeout: float = 1200, check: bool = True) -> subprocess.CompletedProcess[str]:
        """Run ``script`` with ``sh -c`` inside; ``cwd`` is a path inside the userspace. With
        ``check``, a non-zero exit raises :class:`UserspaceError` with the whole output."""
        body = f"cd {shlex.quote(cwd)} && {script}" if cwd else script
        argv = ["chroot"]
        if user != "root":
            argv.append(f"--userspec={UID}:{UID}")
        variables = [f"{k}={v}" for k, v in self.environment(user, env).items()]
        argv += [str(self.root), "/usr/bin/env", "-i", *variables, "/bin/sh", "-c", body]
        result = subprocess.run(argv, input=input, capture_output=True, text=True,
                                timeout=timeout)
        if check and result.returncode != 0:
            raise UserspaceError(f"in the {self.userspace.arch} userspace, `{script}` exited"
                                 f" {result.returncode}:\n--- stdout\n{result.stdout}"
                                 f"\n--- stderr\n{result.stderr}")
        return result

    def host_path(self, inside: str) -> Path:
        """Where a path inside the userspace is on the host."""
        return self.root / inside.lstrip("/")


def prepare(arch: str, cache: Path | None = None) -> Userspace:
    """The ``arch`` userspace, built now if no complete one is cached; safe to call from parallel
    sessions (the second waits for the first's build)."""
    if arch not in ARCHES:
        raise UserspaceError(f"unknown architecture {arch!r}: one of {sorted(ARCHES)}")
    missing = [tool for tool in ("debootstrap", "chroot", "mount") if not shutil.which(tool)]
    if missing:
        raise UserspaceError(f"missing host tools {missing}: install debootstrap"
                             " (deploy/test-packages.txt lists what the tests need)")
    register_binfmt(arch)
    mirror = host_mirror()
    cache = cache or cache_root()
    directory = cache / f"{arch}-{SUITE}-{recipe_key(mirror)}"
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / f".{directory.name}.lock", "w") as lock:
        wait_for_lock(lock, f"the {arch} Pi OS userspace")
        if not (directory / "complete").is_file():
            with setting_up(f"the {arch} Pi OS userspace (debootstrap {SUITE} from {mirror})",
                            cached_in=directory,
                            takes="first run on this machine: about 6 minutes") as progress:
                _build(arch, directory, mirror, progress)
    return Userspace(arch, directory)


def _build(arch: str, directory: Path, mirror: str, progress: SetUpStep) -> None:
    if directory.exists():  # an interrupted build: start again
        _remove_tree(directory)
    root = directory / "root"
    root.mkdir(parents=True)
    progress.watch(root)  # each tick: how many MB debootstrap has written
    env = dict(os.environ)
    proxy = _apt_proxy()
    if proxy and "http_proxy" not in env:
        env["http_proxy"] = proxy
    started = time.monotonic()
    argv = ["debootstrap", f"--arch={ARCHES[arch].debian}", "--variant=minbase",
            f"--include={','.join(PACKAGES)}", SUITE, str(root), mirror]
    try:
        result = subprocess.run(argv, capture_output=True, text=True, timeout=3600, env=env)
    finally:
        for point in _mounts_under(root):  # debootstrap may leave /proc or /sys behind
            _umount(point)
    if result.returncode != 0:
        log = root / "debootstrap/debootstrap.log"
        detail = log.read_text()[-4000:] if log.is_file() else result.stdout[-4000:]
        raise UserspaceError(f"{' '.join(argv)} failed ({result.returncode}); is {mirror}"
                             f" reachable?\n{result.stderr[-2000:]}\n{detail}")
    _add_user(root)
    (root / PIP_CACHE.lstrip("/")).mkdir(parents=True, exist_ok=True)
    os.chown(root / PIP_CACHE.lstrip("/"), UID, UID)
    (directory / "build-seconds").write_text(f"{time.monotonic() - started:.0f}\n")
    (directory / "complete").write_text(f"{' '.join(argv)}\n")


def _add_user(root: Path) -> None:
    """The Pi's first user: uid 1000 with a home, in the gpio/dialout groups Pi OS gives it."""
    for group in ("gpio", "dialout"):
        subprocess.run(["chroot", str(root), "groupadd", "-f", "--system", group], check=False,
                       capture_output=True)
    result = subprocess.run(["chroot", str(root), "useradd", "--uid", str(UID), "--user-group",
                             "--create-home", "--shell", "/bin/bash", "--groups", "gpio,dialout",
                             USER],
                            capture_output=True, text=True)
    if result.returncode != 0:
        raise UserspaceError(f"useradd {USER} in {root} failed: {result.stderr.strip()}")
