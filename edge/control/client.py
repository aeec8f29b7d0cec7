"""A blocking control-socket client, kept light (no asyncio, no config schema) for fast CLI commands."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

from edge.core.exc import DaemonUnavailable, EdgeError


class SocketForbidden(EdgeError):
    """The agent's socket exists but this user may not connect (exit 1, nothing touched)."""


class DaemonNotAnswering(EdgeError):
    """An agent accepted the connection but gave no usable answer in time (exit 1). Not a
    DaemonUnavailable: an agent is there and owns the boards, so nobody falls back to them."""


TIMEOUT_SECONDS = 10.0
OP_TIMEOUTS = {"status": 5.0, "sensors.chart": 60.0, "boards.reattach": 30.0}
"""Shorter waits where the daemon answers from memory; longer where it draws (a chart takes a
Pi Zero several seconds, and its first one loads matplotlib; a board given back after flashing
answers its handshake within ``edge.ops.board_lending.REATTACH_SECONDS``)."""


def request(paths: list[Path], op: str, args: dict[str, Any] | None = None,
            timeout: float | None = None, *, caller: str | None = None) -> dict[str, Any]:
    """Send one operation to the first daemon that answers; raises DaemonUnavailable when none
    is there, DaemonNotAnswering when one is there but stuck or slow. ``caller``: the request is
    made on behalf of someone else (``"as": "mcp:<client>"``), whom the agent's policy sees."""
    timeout = OP_TIMEOUTS.get(op, TIMEOUT_SECONDS) if timeout is None else timeout
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
        except TimeoutError:  # a full backlog: the agent is not accepting
            sock.close()
            raise _not_answering(path, op, timeout) from None
        except OSError:
            sock.close()
            continue
        with sock:
            try:
                message = {"op": op, "args": args or {}, **({"as": caller} if caller else {})}
                sock.sendall(json.dumps(message).encode() + b"\n")
                reply = sock.makefile("rb").readline()
            except TimeoutError:
                raise _not_answering(path, op, timeout) from None
            except ConnectionError:
                reply = b""
        if not reply:
            raise DaemonUnavailable(f"the agent at {path} closed the connection without answering")
        try:
            answer = json.loads(reply)
        except ValueError:
            answer = None
        if not isinstance(answer, dict):
            raise DaemonNotAnswering(f"the agent at {path} answered {op} with something that is "
                                     "not a reply; check that it is edge-agent and that edge-cli "
                                     "is the same version (`edge-cli --version`)")
        return answer
    raise DaemonUnavailable("no running agent found at " + ", ".join(map(str, paths)))


def _not_answering(path: Path, op: str, timeout: float) -> DaemonNotAnswering:
    return DaemonNotAnswering(
        f"the agent at {path} accepted the connection but did not answer {op} within "
        f"{timeout:g} s; it may be stuck: check `edge-cli logs`, then restart it "
        "(`sudo systemctl restart edge-agent`, or stop and start `edge-cli run`)")
