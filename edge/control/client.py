"""A blocking control-socket client, kept light (no asyncio, no pydantic) for fast CLI commands."""

from __future__ import annotations

import json
import socket
from pathlib import Path

from edge.exc import DaemonUnavailable

TIMEOUT_SECONDS = 10.0


def request(paths: list[Path], op: str, args: dict | None = None,
            timeout: float = TIMEOUT_SECONDS) -> dict:
    """Send one operation to the first daemon that answers; raises DaemonUnavailable."""
    for path in paths:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        try:
            sock.connect(str(path))
        except OSError:
            sock.close()
            continue
        with sock:
            sock.sendall(json.dumps({"op": op, "args": args or {}}).encode() + b"\n")
            reply = sock.makefile("rb").readline()
        if not reply:
            raise DaemonUnavailable(f"the agent at {path} closed the connection without answering")
        return json.loads(reply)
    raise DaemonUnavailable("no running agent found at " + ", ".join(map(str, paths)))
