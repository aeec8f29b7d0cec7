"""What the QEMU guest boots: a Debian trixie-backports kernel, a busybox initramfs and (for
amd64) the line watcher, fetched or built once per architecture and cached under
``build/kernel-gpio/``.

Debian 12's kernels lack ``CONFIG_GPIO_SIM``; trixie-backports' ``linux-image-amd64`` and
``linux-image-arm64`` have it as a module. Backports replace their kernel over time (old versions
leave the archive), so the current version is resolved at every fetch with a private apt
configuration per architecture (its own sources list, state and cache directories; the host's apt
sources are never touched) and the cache is keyed by that version. Offline, the newest cached
kernel is used. The amd64 guest's busybox is the host's own static one; the arm64 guest's is
Debian's ``busybox-static`` for arm64 from trixie, fetched the same way. A fetch says on the
terminal what it is doing (tests/setup_progress.py).

Example (fetches 120 MB on first use, so not a doctest)::

    image = prepare()  # Image(version="7.3.4+deb13-amd64", kernel=.../vmlinuz, ...)
    image = prepare(arch="arm64")  # Image(version="7.3.4+deb13-arm64", ..., linewatch=None)
"""

from __future__ import annotations

import gzip
import hashlib
import lzma
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.setup_progress import SetUpStep, setting_up, wait_for_lock

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / "build" / "kernel-gpio"
HERE = Path(__file__).resolve().parent
INIT_SCRIPT = HERE / "guest_init.sh"
LINEWATCH_SOURCE = HERE / "linewatch.c"
BUSYBOX = Path("/bin/busybox")
SUITE = "trixie-backports"
BUSYBOX_SUITE = "trixie"  # busybox-static for a foreign architecture comes from trixie main
MIRROR = "http://deb.debian.org/debian"
# bookworm's debian-archive-keyring (2023.3+deb12u1 and later) already ships the trixie keys
# that sign trixie-backports, so the archive signature is verified against the host's keyring
KEYRING = Path("/usr/share/keyrings/debian-archive-keyring.gpg")
# what /init loads (their dependencies are found and loaded first)...
MODULES = ("configfs", "gpio-sim", "netfs", "9pnet", "9pnet_virtio", "9p", "overlay", "i2c-dev")
VIDEO = ("vivid",)
"""vivid, the kernel's virtual video test driver: /dev/video0 is its capture node
(tests/kernel/test_camera.py); its videobuf2, videodev and v4l2-tpg come first. amd64 only."""
# ...and what tests load later, with parameters: /init copies every module to /run/modules, e.g.
# `busybox insmod /run/modules/i2c_stub.ko chip_addr=0x76` (without chip_addr it refuses)
ON_DEMAND = ("i2c-stub",)
HOST_TOOLS = {"apt-get": "apt", "dpkg-deb": "dpkg", "cpio": "cpio"}


@dataclass(frozen=True)
class Arch:
    """What differs between the guests' architectures."""

    debian: str  # Debian's name: the kernel is linux-image-<debian>
    host_busybox: bool  # the host's /bin/busybox runs in the guest (else busybox-static is fetched)
    linewatch: bool  # the guest runs the host's own root, so host-built tools run there
    on_demand: tuple[str, ...] = ()  # modules copied for tests to load later (see ON_DEMAND)
    boot: tuple[str, ...] = ()  # modules /init loads besides MODULES

    @property
    def modules(self) -> tuple[str, ...]:
        """What /init loads."""
        return MODULES + self.boot


ARCHES = {"amd64": Arch("amd64", host_busybox=True, linewatch=True, on_demand=ON_DEMAND,
                        boot=VIDEO),
          # arm64's kernel has no i2c-stub; its guest runs the agent only
          "arm64": Arch("arm64", host_busybox=False, linewatch=False)}


class ImageError(RuntimeError):
    """The kernel, initramfs or line watcher could not be prepared; the message says why and
    what to do about it."""


@dataclass(frozen=True)
class Image:
    """Everything the guest boots from, as host paths."""

    version: str  # the kernel's release, e.g. "7.3.4+deb13-amd64"
    kernel: Path  # bzImage (amd64) or Image (arm64)
    initramfs: Path  # gzipped newc cpio: busybox, the modules, /init
    linewatch: Path | None  # host binary the amd64 guest runs from the read-only root
    arch: str = "amd64"  # a key of ARCHES


def prepare(cache_dir: Path = CACHE, arch: str = "amd64") -> Image:
    """Fetch (or reuse) ``arch``'s kernel and build what is stale; safe to call from parallel
    sessions."""
    if arch not in ARCHES:
        raise ImageError(f"unknown architecture {arch!r}: one of {sorted(ARCHES)}")
    spec = ARCHES[arch]
    tools = {**HOST_TOOLS, **({"gcc": "gcc"} if spec.linewatch else {})}
    missing = [pkg for tool, pkg in tools.items() if not shutil.which(tool)]
    if spec.host_busybox and not BUSYBOX.is_file():
        missing.append("busybox-static")
    if missing:
        raise ImageError(f"missing host packages {missing}: install them"
                         " (deploy/test-packages.txt lists what the tests need)")
    cache_dir.mkdir(parents=True, exist_ok=True)
    with _locked(cache_dir / ".lock"):
        version, busybox = _current_versions(cache_dir, spec)
        kernel_dir = cache_dir / version
        if not (kernel_dir / "modules.order").is_file() or not all(
                (kernel_dir / "modules" / f"{name.replace('-', '_')}.ko").is_file()
                for name in spec.modules + spec.on_demand):  # a cache from before a module was added
            with setting_up(f"the guest kernel {version} from {MIRROR}", cached_in=kernel_dir,
                            takes="first run in this checkout: a 120 MB download") as progress:
                _fetch_kernel(cache_dir, spec, version, kernel_dir, progress)
        busybox_path = BUSYBOX if spec.host_busybox else _fetch_busybox(cache_dir, spec, busybox)
        return Image(version=version, kernel=kernel_dir / "vmlinuz",
                     initramfs=_initramfs(kernel_dir, busybox_path),
                     linewatch=_linewatch(cache_dir) if spec.linewatch else None, arch=arch)


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    with open(path, "w") as lock:
        wait_for_lock(lock, "the guest kernel")
        yield


def _run(argv: list[str], what: str, **kwargs) -> str:
    result = subprocess.run(argv, capture_output=True, text=True, timeout=600, **kwargs)
    if result.returncode != 0:
        raise ImageError(f"{what} failed ({' '.join(argv)}):\n{result.stdout}{result.stderr}")
    return result.stdout


# -- the kernel ------------------------------------------------------------------------------

def _apt_env(cache_dir: Path, spec: Arch) -> dict[str, str]:
    """A private apt for ``spec``'s architecture: its own sources list, lists and archives under
    ``cache_dir/apt`` (amd64) or ``cache_dir/apt-<arch>``."""
    apt = cache_dir / ("apt" if spec.debian == "amd64" else f"apt-{spec.debian}")
    for sub in ("lists/partial", "archives/partial", "parts"):
        (apt / sub).mkdir(parents=True, exist_ok=True)
    (apt / "status").touch()
    suites = [SUITE] if spec.host_busybox else [SUITE, BUSYBOX_SUITE]
    (apt / "sources.list").write_text("".join(f"deb [signed-by={KEYRING}] {MIRROR} {suite} main\n"
                                              for suite in suites))
    (apt / "apt.conf").write_text("\n".join([
        f'Dir::Etc::SourceList "{apt}/sources.list";',
        f'Dir::Etc::SourceParts "{apt}/parts";',
        f'Dir::Etc::PreferencesParts "{apt}/parts";',
        f'Dir::State "{apt}";',
        f'Dir::State::Lists "{apt}/lists";',
        f'Dir::State::status "{apt}/status";',
        f'Dir::Cache "{apt}";',
        'Dir::Cache::pkgcache "";',
        'Dir::Cache::srcpkgcache "";',
        f'APT::Architecture "{spec.debian}";',
        'APT::Architectures { "' + spec.debian + '"; };',
        f'APT::Default-Release "{SUITE}";',  # backports are NotAutomatic: prefer them anyway
        'APT::Sandbox::User "root";',  # downloads land in our own dirs, not _apt's
        'Acquire::Languages "none";',
        "",
    ]))
    return {**os.environ, "APT_CONFIG": str(apt / "apt.conf")}


def _current_versions(cache_dir: Path, spec: Arch) -> tuple[str, str | None]:
    """The kernel release ``linux-image-<arch>`` in trixie-backports depends on today, and the
    version of trixie's ``busybox-static`` for ``spec`` (None when the host's busybox is used)."""
    env = _apt_env(cache_dir, spec)
    meta = f"linux-image-{spec.debian}"
    update = ""
    try:  # apt-get update succeeds when the mirror is unreachable, with warnings
        update = _run(["apt-get", "update", "-q"], f"apt-get update of {SUITE} ({spec.debian})",
                      env=env)
        info = _run(["apt-cache", "show", "--no-all-versions", meta], f"apt-cache show {meta}",
                    env=env)
        busybox = None if spec.host_busybox else _package_version(env, "busybox-static")
    except ImageError as error:
        cached = sorted(p.parent.name for p in cache_dir.glob(f"*-{spec.debian}/modules.order"))
        boxes = sorted(cache_dir.glob(f"busybox-{spec.debian}-*/busybox"))
        if cached and (spec.host_busybox or boxes):  # offline: the newest fetched before
            return cached[-1], None if spec.host_busybox else boxes[-1].parent.name.split("-", 2)[2]
        hint = (f"the host's {KEYRING} lacks the trixie keys: install debian-archive-keyring"
                " 2023.3+deb12u1 or later (bookworm-updates)" if "NO_PUBKEY" in str(error) else
                f"is {MIRROR} reachable? apt-get update said:\n{update}")
        raise ImageError(f"cannot resolve the {SUITE} {spec.debian} kernel: {error}{hint}"
                         ) from None
    match = re.search(r"^Depends:.*\blinux-image-(\S+?)\s*\(=", info, re.MULTILINE)
    if not match:
        raise ImageError(f"{meta} names no linux-image-<version>:\n{info}")
    return match.group(1), busybox


def _package_version(env: dict[str, str], package: str) -> str:
    info = _run(["apt-cache", "show", "--no-all-versions", package], f"apt-cache show {package}",
                env=env)
    match = re.search(r"^Version:\s*(\S+)", info, re.MULTILINE)
    if not match:
        raise ImageError(f"apt-cache show {package} gave no version:\n{info}")
    return match.group(1)


def _download(env: dict[str, str], packages: list[str], work: Path) -> None:
    """``apt-get download`` the packages into ``work`` and unpack them all into ``work/root``."""
    _run(["apt-get", "download", "-q", *packages], f"downloading {packages}", env=env, cwd=work)
    for deb in work.glob("*.deb"):
        _run(["dpkg-deb", "-x", str(deb), str(work / "root")], f"unpacking {deb.name}")


def _fetch_busybox(cache_dir: Path, spec: Arch, version: str | None) -> Path:
    """trixie's static busybox for ``spec``, unpacked once into ``busybox-<arch>-<version>``."""
    target = cache_dir / f"busybox-{spec.debian}-{version}" / "busybox"
    if target.is_file():
        return target
    with (setting_up(f"{BUSYBOX_SUITE}'s busybox-static {version} for the {spec.debian} guest",
                     cached_in=target.parent) as progress,
          tempfile.TemporaryDirectory(dir=cache_dir) as scratch):
        work = Path(scratch)
        progress.watch(work)
        _download(_apt_env(cache_dir, spec), [f"busybox-static={version}"], work)
        found = next((p for p in (work / "root/bin/busybox", work / "root/usr/bin/busybox")
                      if p.is_file()), None)
        if found is None:
            raise ImageError(f"busybox-static {version} ({spec.debian}) holds no bin/busybox")
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(".partial")
        shutil.copyfile(found, partial)
        partial.chmod(0o755)
        partial.rename(target)
    return target


def _fetch_kernel(cache_dir: Path, spec: Arch, version: str, kernel_dir: Path,
                  progress: SetUpStep) -> None:
    """Download the image (7.x splits it into linux-binary and linux-modules), unpack vmlinuz
    and the modules the guest needs, decompressed, and drop the 120 MB of packages."""
    env = _apt_env(cache_dir, spec)
    wanted = [f"linux-binary-{version}", f"linux-modules-{version}"]
    known = _run(["apt-cache", "pkgnames", "linux-"], "apt-cache pkgnames", env=env).split()
    packages = [p for p in wanted if p in known] or [f"linux-image-{version}"]  # before 7.x
    with tempfile.TemporaryDirectory(dir=cache_dir) as scratch:
        work = Path(scratch)
        progress.watch(work)  # each tick: how many MB are downloaded and unpacked
        progress.say(f"step 1/2: downloading and unpacking {' '.join(packages)}")
        _download(env, packages, work)
        progress.say("step 2/2: copying vmlinuz and decompressing the guest's modules")
        tree = next((d for d in (work / "root/usr/lib/modules" / version,
                                 work / "root/lib/modules" / version) if d.is_dir()), None)
        vmlinuz = next(iter(work.glob(f"root/boot/vmlinuz-{version}")), None)
        vmlinuz = vmlinuz or (tree / "vmlinuz" if tree else None)
        if tree is None or vmlinuz is None or not vmlinuz.is_file():
            raise ImageError(f"{packages} hold no vmlinuz or modules for {version}")
        staging = kernel_dir.with_name(kernel_dir.name + ".partial")
        shutil.rmtree(staging, ignore_errors=True)
        (staging / "modules").mkdir(parents=True)
        try:
            shutil.copyfile(vmlinuz, staging / "vmlinuz")
            order = _unpack_modules(tree, staging / "modules", spec.modules)
            _unpack_modules(tree, staging / "modules", spec.on_demand, order[:])
            (staging / "modules.order").write_text("".join(f"{name}\n" for name in order))
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        shutil.rmtree(kernel_dir, ignore_errors=True)
        staging.rename(kernel_dir)


def _module_name(path: Path) -> str:
    return path.name.split(".ko")[0].replace("-", "_")


def _unpack_modules(tree: Path, target: Path, modules: tuple[str, ...],
                    order: list[str] | None = None) -> list[str]:
    """Write ``modules`` and what they depend on (from each module's .modinfo ``depends=``, so
    no modules.dep is needed) to ``target`` as plain .ko, skipping those already in ``order``;
    return ``order`` with the new names appended in load order."""
    files = {_module_name(p): p for p in tree.rglob("*.ko*")}
    order = [] if order is None else order

    def add(name: str, chain: tuple[str, ...] = ()) -> None:
        if name in order or name in chain:
            return
        if name not in files:
            raise ImageError(f"module {name} (for {' <- '.join(chain) or 'the guest'}) is not in"
                             f" this kernel: it may be built in or renamed; check {tree}")
        path = files[name]
        data = lzma.decompress(path.read_bytes()) if path.suffix == ".xz" else path.read_bytes()
        found = re.search(rb"\0depends=([^\0]*)\0", data)
        for dep in filter(None, (found.group(1).decode() if found else "").split(",")):
            add(dep.replace("-", "_"), (*chain, name))  # modinfo may write videobuf2-common
        (target / f"{name}.ko").write_bytes(data)
        order.append(name)

    for module in modules:
        add(module.replace("-", "_"))
    return order


# -- the initramfs and the line watcher ----------------------------------------------------

def _digest(*parts: bytes) -> str:
    return hashlib.sha256(b"\0".join(parts)).hexdigest()[:12]


def _initramfs(kernel_dir: Path, busybox: Path) -> Path:
    """A gzipped newc cpio with static busybox, the modules and guest_init.sh as /init; named
    by a digest of its inputs, so editing the init script rebuilds it."""
    init = INIT_SCRIPT.read_bytes()
    order = (kernel_dir / "modules.order").read_bytes()
    target = kernel_dir / f"initramfs-{_digest(init, order, busybox.read_bytes())}.cpio.gz"
    if target.is_file():
        return target
    with tempfile.TemporaryDirectory(dir=kernel_dir) as scratch:
        root = Path(scratch) / "root"
        for sub in ("bin", "dev", "proc", "sys", "lib/modules"):
            (root / sub).mkdir(parents=True)
        shutil.copy2(busybox, root / "bin/busybox")
        (root / "init").write_bytes(init)
        (root / "init").chmod(0o755)
        shutil.copytree(kernel_dir / "modules", root / "lib/modules", dirs_exist_ok=True)
        shutil.copyfile(kernel_dir / "modules.order", root / "modules.order")
        names = sorted(str(p.relative_to(root)) for p in root.rglob("*"))
        archive = _run_bytes(["cpio", "-o", "-H", "newc", "-R", "0:0", "--quiet"], root,
                             "\n".join(names))
        partial = target.with_suffix(".partial")
        partial.write_bytes(gzip.compress(archive, compresslevel=1))
        partial.rename(target)
    for stale in kernel_dir.glob("initramfs-*.cpio.gz"):
        if stale != target:
            stale.unlink()
    return target


def _run_bytes(argv: list[str], cwd: Path, stdin: str) -> bytes:
    result = subprocess.run(argv, cwd=cwd, input=stdin.encode(), capture_output=True,
                            timeout=120)
    if result.returncode != 0:
        raise ImageError(f"{' '.join(argv)} failed: {result.stderr.decode()}")
    return result.stdout


def _linewatch(cache_dir: Path) -> Path:
    """linewatch.c built with the host's gcc: the guest runs the host's own root, so its libc."""
    source = LINEWATCH_SOURCE.read_bytes()
    target = cache_dir / f"linewatch-{_digest(source)}"
    if not target.is_file():
        partial = target.with_suffix(".partial")
        _run(["gcc", "-O2", "-Wall", "-Wextra", "-Werror", "-o", str(partial),
              str(LINEWATCH_SOURCE)], "compiling linewatch.c (apt-get install gcc)")
        partial.rename(target)
    return target
