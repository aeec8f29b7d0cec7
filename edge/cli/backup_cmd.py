"""``edge-cli backup create [FILE]``, ``backup verify FILE``, ``backup restore FILE``: one archive
of what the agent needs to come back on a new SD card (:mod:`edge.backup`).

``create`` may run beside the running agent (its databases are copied through SQLite's backup
API); without FILE the archive goes to ``<state>/backups/``. The config is always included; the
environment file (``--env-file``, default /etc/edge-agent/env), pairing codes, fleet keys and chat
sessions only with ``--secrets``. A passphrase (``--passphrase-file``, else ``[backup]
passphrase``, i.e. ``EDGE_BACKUP__PASSPHRASE``) seals the archive.

``restore`` refuses to write over a running agent's state. Without ``--state-dir``, ``--config``
and ``--env-file`` it puts each part back where the archive says it came from (the same paths
on a Pi installed the same way); ``EDGE_STATE_DIR`` and ``EDGE_CONFIG`` count as given.

Exit codes: 0 done; 1 a file could not be read or written, or an agent runs on that state
directory; 2 bad usage, or an archive that is not one, altered, damaged, or sealed with
another passphrase.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from edge.backup.contents import ENV_FILE
from edge.cli.output import emit
from edge.control.ops import OpResult
from edge.core.exc import UsageError

if TYPE_CHECKING:
    from edge.backup.archive import Manifest

def _passphrase(args: argparse.Namespace, configured: str | None) -> str | None:
    if args.passphrase_file is None:
        return configured or os.environ.get("EDGE_BACKUP__PASSPHRASE") or None
    text = sys.stdin.read() if args.passphrase_file == "-" else Path(args.passphrase_file).read_text()
    phrase = text.rstrip("\r\n")
    if not phrase:
        raise UsageError(f"{args.passphrase_file}: the passphrase file is empty")
    return phrase


def _summary(manifest: Manifest) -> dict[str, Any]:
    return {"version": manifest.version, "created": manifest.created, "host": manifest.host,
            "secrets": manifest.secrets, "files": [m.path for m in manifest.files],
            "bytes": sum(m.size for m in manifest.files)}


def create(args: argparse.Namespace) -> int:
    from edge.backup.archive import create_backup, default_name
    from edge.config.loader import load_config

    loaded = load_config(args.config)
    configured = loaded.config.backup.passphrase
    passphrase = _passphrase(args, configured.get_secret_value() if configured else None)
    destination = Path(args.file) if args.file else loaded.state_dir / "backups"
    if args.file is None or destination.is_dir():
        destination = destination / default_name(sealed=passphrase is not None)
    manifest = create_backup(destination, state_dir=loaded.state_dir, config=loaded.path,
                             env_file=Path(args.env_file), secrets=args.secrets,
                             passphrase=passphrase)
    size = destination.stat().st_size
    left = "" if args.secrets else " (no secrets: --secrets adds the env file, pairings, fleet keys, sessions)"
    return emit(OpResult(True, f"Backed up {len(manifest.files)} files to {destination} "
                         f"({size / 1e6:.1f} MB{', sealed' if passphrase else ''}){left}.",
                         {"path": str(destination), "size": size, "sealed": passphrase is not None,
                          **_summary(manifest)}), args.json)


def verify(args: argparse.Namespace) -> int:
    from edge.backup.archive import verify_backup

    manifest = verify_backup(Path(args.file), _passphrase(args, None))
    return emit(OpResult(True, f"{args.file}: {len(manifest.files)} files match the manifest and "
                         f"every database passes its integrity check (edge-agent {manifest.version} "
                         f"on {manifest.host}, {manifest.created})",
                         {"path": args.file, **_summary(manifest)}), args.json)


def restore(args: argparse.Namespace) -> int:
    from edge.backup.restore import restore_backup

    state = args.state_dir or os.environ.get("EDGE_STATE_DIR")
    config = args.config or os.environ.get("EDGE_CONFIG")
    restored = restore_backup(Path(args.file), state_dir=Path(state) if state else None,
                              config=Path(config) if config else None,
                              env_file=Path(args.env_file) if args.env_file else None,
                              passphrase=_passphrase(args, None))
    where = f" and the config to {restored.config}" if restored.config else ""
    return emit(OpResult(True, f"Restored {restored.files} files into {restored.state_dir}{where}. "
                         "Start the agent (`sudo systemctl start edge-agent`, or `edge-cli run`), "
                         "then check it with `edge-cli doctor`.",
                         {"path": args.file, "state_dir": str(restored.state_dir),
                          "config": str(restored.config) if restored.config else None,
                          "env_file": str(restored.env_file) if restored.env_file else None,
                          "restored": restored.files, **_summary(restored.manifest)}), args.json)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
    backup = sub.add_parser("backup", parents=[common], help="back up, check and restore the "
                            "agent's config and state (a new SD card)",
                            description=(__doc__ or "").split("\n\n")[1])
    actions = backup.add_subparsers(dest="backup_action", metavar="ACTION", required=True)
    sealing = argparse.ArgumentParser(add_help=False)
    sealing.add_argument("--passphrase-file", metavar="PATH",
                         help="the passphrase, in a file ('-': stdin); default: [backup] "
                              "passphrase (EDGE_BACKUP__PASSPHRASE)")
    making = actions.add_parser("create", parents=[common, sealing], help="write an archive of the "
                                "config and state (safe while the agent runs)")
    making.add_argument("file", metavar="FILE", nargs="?",
                        help="the archive, or a folder for it (default: <state>/backups/)")
    making.add_argument("--secrets", action="store_true", help="also the environment file, "
                        "pairing codes, fleet keys and chat sessions")
    making.add_argument("--env-file", default=str(ENV_FILE), metavar="PATH",
                        help=f"the environment file --secrets takes (default {ENV_FILE})")
    making.set_defaults(handler=create)
    checking = actions.add_parser("verify", parents=[common, sealing], help="check an archive: "
                                  "every file's SHA-256 and every database's integrity")
    checking.add_argument("file", metavar="FILE")
    checking.set_defaults(handler=verify)
    putting = actions.add_parser("restore", parents=[common, sealing], help="put an archive back "
                                 "(the agent stopped); --config names where the config goes")
    putting.add_argument("file", metavar="FILE")
    putting.add_argument("--state-dir", metavar="DIR",
                         help="restore the state here (default: EDGE_STATE_DIR, else where it was)")
    putting.add_argument("--env-file", metavar="PATH",
                         help="put the environment file here (default: where it was)")
    putting.set_defaults(handler=restore)
