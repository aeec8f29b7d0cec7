"""Where a stdio MCP server runs: in a bubblewrap sandbox that cannot reach the agent.

A sandboxed server (``[[mcp.servers]] sandbox = true``, the default) sees the system's
directories read-only (``/usr``, ``/bin``, ``/lib*``, ``/etc``), its command's own directory (a
venv's root when the command is in its ``bin``), the entry's ``paths`` (read-only) and
``writable_paths``, a fresh ``/tmp``, and its own scratch directory
(``<state>/mcp-scratch/<name>``) as ``/home/mcp``: its home and working directory. The agent's
state directory, the control socket's directory, the config file and ``/etc/edge-agent`` are
hidden even where a listed path contains them. Its environment is ``PATH``, ``HOME``, ``LANG``
and the entry's ``env``, nothing of the agent's. It gets its own process, IPC and host-name
namespaces (the agent's ``/proc/<pid>/environ`` is out of sight), keeps the network unless
``network = false``, and dies with the agent.

:func:`bwrap_usable` runs the sandbox once (``true`` inside it) and remembers the answer: a
kernel without unprivileged user namespaces, or a service unit that forbids them, leaves no
sandbox, and then a sandboxed server does not start (:class:`SandboxUnavailable` says why). A
kernel that refuses a fresh ``/proc`` (a unit's ``ProtectKernelTunables`` over-mounts it) gets a
sandbox without ``/proc``.

>>> places = Places(state_dir=Path("/var/lib/edge-agent"), socket_dir=Path("/run/edge-agent"),
...                 config_file=Path("/etc/edge-agent/config.toml"))
>>> places.scratch("notes")
PosixPath('/var/lib/edge-agent/mcp-scratch/notes')
"""

from __future__ import annotations

import errno
import functools
import os
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from edge.config.mcp import McpServerConfig
from edge.core.exc import EdgeError
from edge.core.paths import control_socket, state_dir

if TYPE_CHECKING:
    from edge.config.loader import LoadedConfig

HOME = "/home/mcp"
"""The sandboxed server's home and working directory (its scratch directory, bound there)."""
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
DNS_DIRS = ("/run/systemd/resolve", "/run/resolvconf", "/run/NetworkManager")
"""Where ``/etc/resolv.conf`` may point: bound read-only when the server has the network."""
SERVICE_CONFIG_DIR = Path("/etc/edge-agent")
"""The service's config and its environment file of secrets: always hidden."""
SAFE_PATH = "/usr/local/bin:/usr/bin:/bin"
PROBE_SECONDS = 10.0


class SandboxUnavailable(EdgeError):
    """A server that asks for the sandbox cannot have one here: it is not started."""


@dataclass(frozen=True)
class Places:
    """The agent's own places a server must not reach, and where its scratch directories go."""

    state_dir: Path
    socket_dir: Path
    config_file: Path | None = None

    @classmethod
    def of(cls, loaded: LoadedConfig) -> Places:
        return cls(loaded.state_dir, loaded.control_socket.parent, loaded.path)

    def scratch(self, server: str) -> Path:
        return self.state_dir / "mcp-scratch" / server

    def hidden(self) -> list[Path]:
        """Directories hidden from a sandboxed server wherever a bound path would show them."""
        found = [self.state_dir, self.socket_dir, SERVICE_CONFIG_DIR]
        return list(dict.fromkeys(Path(os.path.abspath(p)) for p in found))


def default_places(env: Mapping[str, str] = os.environ) -> Places:
    """The places of an agent run with no ``[paths]`` config (tests, tools built alone)."""
    return Places(state_dir(None, env), control_socket(None, env).parent)


@dataclass(frozen=True)
class Launch:
    """How to start a server: the argv, its environment and working directory."""

    argv: list[str]
    env: dict[str, str]
    cwd: str
    sandboxed: bool


@functools.cache
def bwrap_usable(bwrap: str = "bwrap") -> tuple[str | None, bool, str]:
    """``(path, with_proc, why_not)``: bwrap's path when a sandbox runs here (and whether it
    may mount a fresh ``/proc``), else None and why. Probed once per path."""
    path = shutil.which(bwrap)
    if path is None:
        return None, False, (f"{bwrap} is not installed: sudo apt install bubblewrap (or set "
                             "sandbox = false for this server)")
    why = ""
    for with_proc in (True, False):
        argv = [path, *_isolation(network=True, with_proc=with_proc),
                *_system_binds(network=False), "true"]
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=PROBE_SECONDS)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return None, False, f"{path} does not run: {exc}"
        if done.returncode == 0:
            return path, with_proc, ""
        why = " ".join(done.stderr.split())[:200] or f"exit status {done.returncode}"
    return None, False, f"{path} cannot make a sandbox here ({why}): {_namespaces_fix()}"


SERVICE_DROP_IN = ("sudo install -D -m 0644 /opt/edge-agent/share/mcp-sandbox.conf "
                   "/etc/systemd/system/edge-agent.service.d/mcp-sandbox.conf && sudo systemctl "
                   "daemon-reload && sudo systemctl restart edge-agent")
"""What lets the service's sandbox run (systemd/mcp-sandbox.conf, shipped by install.sh)."""


def _namespaces_fix(env: Mapping[str, str] = os.environ) -> str:
    """Under systemd (which sets ``INVOCATION_ID``) the unit's hardening is what stops bubblewrap,
    and its drop-in is the fix; elsewhere the kernel's user namespaces are off."""
    if env.get("INVOCATION_ID"):
        return f"the service's hardening forbids it; to let it run: {SERVICE_DROP_IN}"
    return ("user namespaces are off (sysctl kernel.unprivileged_userns_clone=1, or "
            "user.max_user_namespaces > 0)")


def launch(config: McpServerConfig, places: Places, environ: Mapping[str, str] = os.environ,
           bwrap: str = "bwrap") -> Launch:
    """The server's start: in the sandbox, or as it is when the entry says ``sandbox = false``;
    raises SandboxUnavailable when it asks for a sandbox and none runs here."""
    assert config.command is not None  # a command server
    scratch = places.scratch(config.name)
    scratch.mkdir(parents=True, exist_ok=True, mode=0o700)
    lang = environ.get("LANG", "C.UTF-8")
    if not config.sandbox:
        base = {k: environ[k] for k in ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")
                if k in environ}
        return Launch([config.command, *config.args], {**base, "LANG": lang, **config.env},
                      str(scratch), sandboxed=False)
    for given in [*config.paths, *config.writable_paths]:
        if not os.path.exists(given):
            raise FileNotFoundError(errno.ENOENT, "a path this server is given does not exist "
                                    "(create it or mount it, or leave it out of paths)", given)
    path, with_proc, why = bwrap_usable(bwrap)
    if path is None:
        raise SandboxUnavailable(f"not started: no sandbox: {why}")
    command = _resolved(shutil.which(config.command, path=config.env.get("PATH", SAFE_PATH))
                        or config.command)
    if not os.path.isabs(command) or not os.access(command, os.X_OK):
        raise FileNotFoundError(errno.ENOENT, "no such command", config.command)
    argv = [path, *_isolation(config.network, with_proc), *_system_binds(config.network)]
    binds = [("--ro-bind", source) for source in [*_command_dirs(command), *config.paths]]
    binds += [("--bind", source) for source in config.writable_paths]
    for flag, source in sorted(binds, key=lambda bind: len(Path(bind[1]).parts)):
        argv += [flag, source, source]  # a folder before what is inside it
    argv += _hide(places, [*SYSTEM_DIRS, *_command_dirs(command), *config.paths,
                           *config.writable_paths])
    argv += ["--bind", str(scratch), HOME, "--chdir", HOME, "--clearenv"]
    for key, value in {"PATH": SAFE_PATH, "HOME": HOME, "LANG": lang, **config.env}.items():
        argv += ["--setenv", key, value]
    return Launch([*argv, "--", command, *config.args], {"PATH": SAFE_PATH}, str(scratch),
                  sandboxed=True)


def _isolation(network: bool, with_proc: bool) -> list[str]:
    argv = ["--unshare-all", "--die-with-parent", "--new-session", "--dev", "/dev",
            "--tmpfs", "/tmp"]
    if network:
        argv.insert(1, "--share-net")
    return argv + (["--proc", "/proc"] if with_proc else [])


def _system_binds(network: bool) -> list[str]:
    argv: list[str] = []
    for place in SYSTEM_DIRS + (DNS_DIRS if network else ()):
        if os.path.islink(place):
            argv += ["--symlink", os.readlink(place), place]
        elif os.path.isdir(place):
            argv += ["--ro-bind", place, place]
    return argv


def _resolved(command: str) -> str:
    """The command in its directory's real place (a venv's ``bin/python`` stays the venv's)."""
    if not os.path.isabs(command):
        return command
    return os.path.join(os.path.realpath(os.path.dirname(command)), os.path.basename(command))


def _command_dirs(command: str) -> list[str]:
    """The command's directory, or its prefix when it sits in a ``bin`` (a venv's root), and
    the same of what it links to and of a venv's interpreter (``home`` in its pyvenv.cfg),
    unless the system's directories hold them."""
    if not os.path.isabs(command):
        return []
    found: list[str] = []
    for target in _link_chain(command):
        folder = os.path.dirname(target)
        if os.path.basename(folder) == "bin":
            folder = os.path.dirname(folder)
        if folder != "/" and not any(_within(folder, system) for system in SYSTEM_DIRS):
            found.append(folder)
    return list(dict.fromkeys(found))


def _link_chain(command: str) -> list[str]:
    chain = [command]
    for _ in range(8):
        if not os.path.islink(chain[-1]):
            break
        chain.append(os.path.join(os.path.dirname(chain[-1]), os.readlink(chain[-1])))
    prefix = os.path.dirname(os.path.dirname(command))
    try:
        with open(os.path.join(prefix, "pyvenv.cfg")) as cfg:
            homes = [line.split("=", 1)[1].strip() for line in cfg if line.startswith("home")]
    except OSError:
        homes = []
    return [os.path.abspath(path) for path in chain + [os.path.join(h, "python") for h in homes]]


def _hide(places: Places, shown: list[str]) -> list[str]:
    """A tmpfs over each of the agent's places that a bound path shows, and /dev/null over the
    config file."""
    argv: list[str] = []
    for place in places.hidden():
        if place.is_dir() and _shown(place, shown):
            argv += ["--tmpfs", str(place)]
    config = places.config_file
    if config is not None and config.is_file() and _shown(config, shown):
        argv += ["--ro-bind", "/dev/null", str(config)]
    return argv


def _shown(place: Path, shown: list[str]) -> bool:
    names = {os.path.abspath(place), os.path.realpath(place)}
    return any(_within(name, source) or _within(name, os.path.realpath(source))
               for name in names for source in shown)


def _within(path: str, folder: str) -> bool:
    path, folder = os.path.abspath(path), os.path.abspath(folder)
    return path == folder or path.startswith(folder.rstrip("/") + "/")
