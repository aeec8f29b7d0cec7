"""The daemon's control socket: newline-delimited JSON over a Unix socket (mode 0660).

Request ``{"op": "gpio.read", "args": {"pin": "led"}}``; reply is :meth:`OpResult.as_dict`.
The requester is the peer's local user by its credentials (``local:pi``), for the policy and the log.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import pwd
import socket
import struct
from pathlib import Path

from edge.control.ops import OpResult, OpTarget, run_op
from edge.exc import EdgeError
from edge.requester import Requester

log = logging.getLogger(__name__)

REQUEST_LIMIT = 64 * 1024
SOCKET_MODE = 0o660


def peer_requester(writer: asyncio.StreamWriter) -> Requester:
    """The local user on the other end of the socket, by its kernel credentials."""
    sock = writer.get_extra_info("socket")
    try:
        creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        _pid, uid, _gid = struct.unpack("3i", creds)
    except (OSError, AttributeError):
        return Requester("local", "unknown")
    try:
        return Requester("local", pwd.getpwuid(uid).pw_name)
    except KeyError:
        return Requester("local", f"uid={uid}")


def _claim_path(path: Path) -> None:
    """Remove a stale socket; refuse if another daemon answers on it."""
    if not path.exists():
        return
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(str(path))
    except OSError:
        path.unlink()
        return
    finally:
        probe.close()
    raise EdgeError(f"another edge-agent is already running (control socket {path}); "
                    "stop it first, or use `edge-cli status`")


class ControlServer:
    def __init__(self, path: Path, target: OpTarget):
        self.path = path
        self.target = target
        self._server: asyncio.AbstractServer | None = None

    async def start(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        _claim_path(self.path)
        self._server = await asyncio.start_unix_server(self._serve, str(self.path),
                                                       limit=REQUEST_LIMIT)
        os.chmod(self.path, SOCKET_MODE)
        log.info("control_socket_listening path=%s", self.path)

    async def close(self) -> None:
        if self._server:
            self._server.close()
            await self._server.wait_closed()
            self.path.unlink(missing_ok=True)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        requester = peer_requester(writer)
        try:
            while line := await reader.readline():
                result = await self._answer(line, requester)
                writer.write(json.dumps(result.as_dict()).encode() + b"\n")
                await writer.drain()
        except (ValueError, ConnectionError):  # over-long line or client gone
            pass
        finally:
            writer.close()

    async def _answer(self, line: bytes, requester: Requester) -> OpResult:
        try:
            request = json.loads(line)
            op, args = request["op"], request.get("args") or {}
            if not isinstance(args, dict):
                raise TypeError("args must be an object")
        except (ValueError, KeyError, TypeError) as exc:
            return OpResult(False, f"bad request: {exc}", exit_code=2)
        try:
            return await run_op(self.target, str(op), args, requester)
        except Exception as exc:
            log.exception("control_op_failed op=%s by=%s", op, requester.caller)
            return OpResult(False, f"{op} failed inside the agent: {exc}", exit_code=1)
