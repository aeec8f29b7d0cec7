"""``edge-cli logs [-f] [-n N] [--json]``: the service's journal under systemd, else the log file
that ``edge-cli run`` writes in the state directory (``[logging] file``).

``--json`` reads each event as an object, whichever format the agent logs in: one JSON object
(``data.events``) as every command prints, or with ``-f`` one object per event as it comes (JSON
Lines), since a stream has no end to wait for.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from edge.cli.arguments import whole_number
from edge.core.exc import EXIT_FAILED, EdgeError

UNIT = "edge-agent"
POLL_SECONDS = 0.25


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
    parser = sub.add_parser("logs", parents=[common], help="show the agent's log (journal or file)",
                            description=__doc__)
    parser.add_argument("-f", "--follow", action="store_true", help="keep printing new events")
    parser.add_argument("-n", "--lines", type=whole_number(at_least=0), default=50, metavar="N",
                        help="how many recent events to show first (default 50)")
    parser.add_argument("--source", choices=["auto", "journal", "file"], default="auto",
                        help="where to read (default: the journal if the service is installed)")
    parser.set_defaults(handler=run)


def service_in_journal() -> bool:
    """True when systemd runs here and knows the edge-agent unit."""
    if not (Path("/run/systemd/system").is_dir() and shutil.which("journalctl")
            and shutil.which("systemctl")):
        return False
    out = subprocess.run(["systemctl", "show", "-p", "LoadState", "--value", UNIT],
                         capture_output=True, text=True)
    return out.stdout.strip() == "loaded"


def log_file(config_path: str | None) -> Path:
    from edge.config.locate import load_raw
    from edge.core.logsetup import log_file_path
    from edge.core.paths import state_dir

    raw = load_raw(config_path).data
    configured_state = (raw.get("paths") or {}).get("state_dir")
    configured_file = (raw.get("logging") or {}).get("file", "edge-agent.log")
    path = log_file_path(str(configured_file),
                         state_dir(configured_state if isinstance(configured_state, str) else None))
    if path is None:
        raise EdgeError("[logging] file is empty, so the agent keeps no log file; set it (e.g. "
                        "file = \"edge-agent.log\") or read the journal: journalctl -u edge-agent")
    return path


def journal_command(follow: bool, lines: int, as_json: bool) -> list[str]:
    command = ["journalctl", "-u", UNIT, "-n", str(lines), "--no-pager"]
    if as_json:
        command += ["-o", "cat"]
    if follow:
        command.append("-f")
    return command


def tail(path: Path, lines: int) -> tuple[list[str], int]:
    """The last ``lines`` lines and the offset after them."""
    with path.open("r", encoding="utf-8", errors="replace") as fh:
        last = deque(fh, maxlen=max(lines, 0))
        return list(last), fh.tell()


def follow_file(path: Path, offset: int, stop_after: float | None = None) -> Iterator[str]:
    """New lines as they are written; reopens the file after rotation (new inode or shorter)."""
    started = time.monotonic()
    inode = path.stat().st_ino
    pending = ""
    while stop_after is None or time.monotonic() - started < stop_after:
        try:
            st = path.stat()
        except FileNotFoundError:
            time.sleep(POLL_SECONDS)
            continue
        if st.st_ino != inode or st.st_size < offset:
            inode, offset = st.st_ino, 0
        if st.st_size > offset:
            with path.open("r", encoding="utf-8", errors="replace") as fh:
                fh.seek(offset)
                chunk = fh.read()
                offset = fh.tell()
            pending += chunk
            *complete, pending = pending.split("\n")
            yield from (line + "\n" for line in complete)
        else:
            time.sleep(POLL_SECONDS)


def emit_line(line: str, as_json: bool) -> None:
    if as_json:
        from edge.core.logformat import parse_line

        if line.strip():
            print(json.dumps(parse_line(line)), flush=True)
    else:
        sys.stdout.write(line)
        sys.stdout.flush()


def emit_events(lines: list[str], data: dict[str, Any]) -> int:
    """``--json`` without ``-f``: the events as one JSON object, ``data.events``."""
    from edge.cli.output import emit
    from edge.control.ops import OpResult
    from edge.core.logformat import parse_line

    events = [parse_line(line) for line in lines if line.strip()]
    return emit(OpResult(True, f"{len(events)} event(s)", {**data, "events": events}), True)


def run(args: argparse.Namespace) -> int:
    source = args.source
    if source == "auto":
        source = "journal" if service_in_journal() else "file"
    if source == "journal":
        if not shutil.which("journalctl"):
            raise EdgeError("journalctl is not installed here; use --source file")
        command = journal_command(args.follow, args.lines, args.json)
        if not args.json:
            os.execvp(command[0], command)
        if not args.follow:
            done = subprocess.run(command, capture_output=True, text=True)
            if done.returncode != 0:
                raise EdgeError(f"journalctl failed (exit {done.returncode}): "
                                f"{done.stderr.strip()[-500:]}")
            return emit_events(done.stdout.splitlines(), {"source": "journal", "unit": UNIT})
        with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as proc:
            for line in proc.stdout or ():
                emit_line(line, True)
            return 0 if proc.wait() == 0 else EXIT_FAILED
    path = log_file(args.config)
    if not path.is_file():
        raise EdgeError(f"no log file at {path} yet: start the agent with `edge-cli run` (as "
                        "this user), or read the service's journal: journalctl -u edge-agent")
    lines, offset = tail(path, args.lines)
    if args.json and not args.follow:
        return emit_events(lines, {"source": "file", "path": str(path)})
    for line in lines:
        emit_line(line, args.json)
    if args.follow:
        for line in follow_file(path, offset):
            emit_line(line, args.json)
    return 0
