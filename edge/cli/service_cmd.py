"""``edge-cli service install|uninstall|status``: the common cases of ``deploy/install.sh``.

``install`` also repairs and regenerates the udev rules after board changes; ``install --upgrade``
builds a new venv and rolls back if it fails its health check. ``status`` exits 0 when the service
is active (or, under ``--root``, fully installed) and 1 otherwise. ``install`` and ``uninstall``
exit as install.sh does (1 failed, 2 bad usage); with ``--json`` its output is kept for the one
JSON object (``data.output``) instead of streaming to the terminal.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

from edge.cli.output import emit
from edge.control.ops import OpResult
from edge.core.exc import EXIT_FAILED, EXIT_USAGE, EdgeError

INSTALLED_SCRIPT = Path("/opt/edge-agent/share/install.sh")
SHOWN_PROPERTIES = ("LoadState", "ActiveState", "SubState", "MainPID", "NRestarts", "StatusText",
                    "ActiveEnterTimestamp", "Result")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
    service = sub.add_parser("service", parents=[common], help="install, remove or inspect the "
                             "systemd service", description=__doc__)
    ssub = service.add_subparsers(dest="action", metavar="ACTION", required=True)
    install = ssub.add_parser("install", parents=[common], help="install or repair the service")
    install.add_argument("--upgrade", action="store_true",
                         help="install a new version, rolling back if it is unhealthy")
    install.add_argument("--source", metavar="PATH", help="what pip installs: a checkout of "
                         "edge-agent, a source tarball (.tar.gz) or a .whl built from one "
                         "(default: this checkout)")
    install.add_argument("--no-start", action="store_true", help="do not enable or start it")
    uninstall = ssub.add_parser("uninstall", parents=[common], help="remove the service")
    uninstall.add_argument("--purge", action="store_true",
                           help="also remove config, state and the edge user")
    status = ssub.add_parser("status", parents=[common], help="systemd's view of the service")
    for parser in (install, uninstall, status):
        parser.add_argument("--root", metavar="DIR", help="act on a scratch root (tests)")
    service.set_defaults(handler=run)


def install_script() -> Path:
    """This checkout's script if edge-cli runs from one, else the copy install.sh left behind."""
    checkout = Path(__file__).resolve().parents[2] / "deploy" / "install.sh"
    for candidate in (checkout, INSTALLED_SCRIPT):
        if candidate.is_file():
            return candidate
    raise EdgeError("cannot find install.sh: run it from a checkout of edge-agent "
                    "(sudo deploy/install.sh) or reinstall")


def script_command(args: argparse.Namespace) -> list[str]:
    command = ["sh", str(install_script())]
    if args.action == "uninstall":
        command.append("--uninstall")
        if args.purge:
            command.append("--purge")
    else:
        if args.upgrade:
            command.append("--upgrade")
        if args.source:
            command += ["--source", args.source]
        if args.no_start:
            command.append("--no-start")
    if args.root:
        command += ["--root", args.root]
    if os.geteuid() != 0 and not args.root:
        if not shutil.which("sudo"):
            raise EdgeError("installing the service needs root: run this as root")
        command.insert(0, "sudo")
    return command


def systemd_properties() -> dict[str, str] | None:
    if not (Path("/run/systemd/system").is_dir() and shutil.which("systemctl")):
        return None
    out = subprocess.run(["systemctl", "show", "edge-agent", "-p", ",".join(SHOWN_PROPERTIES)],
                         capture_output=True, text=True)
    return dict(line.split("=", 1) for line in out.stdout.splitlines() if "=" in line)


def installed_layout(root: Path) -> dict[str, bool]:
    return {name: (root / path).exists() for name, path in (
        ("venv", "opt/edge-agent/venv/bin/edge-cli"),
        ("unit", "etc/systemd/system/edge-agent.service"),
        ("config", "etc/edge-agent/config.toml"),
        ("udev_rules", "etc/udev/rules.d/99-edge-agent.rules"))}


def status(args: argparse.Namespace) -> int:
    root = Path(args.root) if args.root else Path("/")
    layout = installed_layout(root)
    props = None if args.root else systemd_properties()
    # under --root: whether all is installed; else systemd's word (none where it is not running)
    active = all(layout.values()) if args.root else props is not None and props.get("ActiveState") == "active"
    missing = [name for name, present in layout.items() if not present]
    lines = [f"installed under {root}: " + ("complete" if not missing else
                                            f"missing {', '.join(missing)}")]
    if props is None:
        lines.append("systemd: not running here" if not args.root else "systemd: not checked (--root)")
    else:
        lines.append(f"service: {props.get('ActiveState')} ({props.get('SubState')}), "
                     f"pid {props.get('MainPID')}, restarts {props.get('NRestarts')}, "
                     f"since {props.get('ActiveEnterTimestamp') or '-'}")
        if props.get("StatusText"):
            lines.append(f"status: {props['StatusText']}")
    if missing:
        lines.append("install it with: sudo edge-cli service install")
    data = {"root": str(root), "installed": layout, "systemd": props}
    if args.json:
        return emit(OpResult(active, "; ".join(lines), data), True)
    print("\n".join(lines[:-1] if missing else lines))
    if missing:
        print(lines[-1], file=sys.stderr)
    return 0 if active else EXIT_FAILED


def script_exit(status: int) -> int:
    """edge-cli's code for how install.sh (or sudo) ended: 0 and 2 (bad usage) as they are,
    anything else (a failure, a signal) 1."""
    return status if status in (0, EXIT_USAGE) else EXIT_FAILED


def run(args: argparse.Namespace) -> int:
    if args.action == "status":
        return status(args)
    command = script_command(args)
    if not args.json:
        return script_exit(subprocess.run(command).returncode)
    done = subprocess.run(command, capture_output=True, text=True)
    code = script_exit(done.returncode)
    output = (done.stdout + done.stderr)[-4000:]
    data = {"action": args.action, "command": command, "exit_status": done.returncode,
            "output": output}
    if code == 0:
        return emit(OpResult(True, f"install.sh {args.action}: done", data), True)
    last = next((line for line in reversed(done.stderr.splitlines()) if line.strip()),
                f"install.sh exited {done.returncode}")
    return emit(OpResult(False, last, data, code), True)
