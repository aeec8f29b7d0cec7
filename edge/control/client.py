"""A blocking control-socket client, kept light (no asyncio, no pydantic) for fast CLI commands."""

from __future__ import annotations

import json
import socket
from pathlib import Path

from edge.exc import DaemonUnavailable, EdgeError


class SocketForbidden(EdgeError):
    """The agent's socket exists but this user may not connect (exit 1, nothing touched)."""


TIMEOUT_SECONDS = 10.0


def request(paths: list[Path], op: str, args: dict | None = None,
            timeout: float = TIMEOUT_SECONDS) -> dict:
    """Send one operation to the first daemon that answers; raises DaemonUnavailable."""
    for path in paths:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        try:
            sock.connect(str(path))
        except PermissionError:
            sock.close()
            raise SocketForbidden(
                f"an agent is running but you may not use its control socket {path} (permission "
                "denied); add yourself to the edge group (`sudo usermod -aG edge $USER`, then "
                "`newgrp edge` or log in again), or run the command with sudo") from None
        except (FileNotFoundError, ConnectionRefusedError, NotADirectoryError):
            sock.close()  # no daemon there (or a stale socket from one that died)
            continue
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
