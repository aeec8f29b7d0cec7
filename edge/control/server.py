"""The daemon's control socket: newline-delimited JSON over a Unix socket (mode 0660).

Request ``{"op": "gpio.read", "args": {"pin": "led"}}``; reply is :meth:`OpResult.as_dict`.
The requester is the peer's local user by its credentials (``local:pi``), for the policy and the log.
``edge-cli mcp`` adds ``"as": "mcp:<client>"``: the MCP client it serves is then the caller (as a
model asking, see :func:`edge.control.ops.mcp_requester`), and the local user its "why" in the
audit trail; a peer can name only an ``mcp:`` caller, never a chat user. What verified it is the
peer's uid with that name (``uid:1000 mcp:claude-desktop``): an admin's *Always* for it does not
cover another local user whose client gives the same name.

The socket is a server facing every local user who can open it, so it holds its own limits:

- a request line is at most ``REQUEST_LIMIT`` bytes and JSON nested at most ``NESTING_LIMIT``
  deep; anything else is answered with an error (exit code 2) and the connection closed;
- a connection that sends no complete request line within ``IDLE_TIMEOUT_SECONDS`` is closed;
- at most ``MAX_CONNECTIONS`` are open at once. A newcomer beyond that closes the connection
  that has been waiting longest for a request (an idle one), so a flood of idle connections can
  neither exhaust the daemon's file descriptors nor lock out ``edge-cli status``; when every
  connection is busy running an operation, the newcomer gets ``{"ok": false, ...}`` at once.

The local operator (see :func:`is_local_operator`) may also switch the model (``models.select``),
change schedules, leave safe mode and issue pairing codes (``channel.pair``): the operations in
:func:`edge.ops.catalog.for_operator`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import pwd
import socket
import struct
from collections import OrderedDict
from pathlib import Path

from edge.control.ops import OpResult, OpTarget, mcp_requester, run_op
from edge.core.exc import EdgeError
from edge.core.requester import Requester

log = logging.getLogger(__name__)

REQUEST_LIMIT = 64 * 1024
NESTING_LIMIT = 16
"""Requests are flat (``{"op", "args": {...}}``); deeper JSON is refused before it is parsed."""
IDLE_TIMEOUT_SECONDS = 10.0
"""How long a connection may wait to send a complete request line (and to take the reply)."""
MAX_CONNECTIONS = 64
SOCKET_MODE = 0o660


def peer_credentials(writer: asyncio.StreamWriter) -> tuple[int, int, int] | None:
    """(pid, uid, gid) of the process on the other end, from the kernel; None if unreadable."""
    sock = writer.get_extra_info("socket")
    try:
        creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        pid, uid, gid = struct.unpack("3i", creds)
    except (OSError, AttributeError):
        return None
    return pid, uid, gid


def peer_requester(writer: asyncio.StreamWriter) -> Requester:
    """The local user on the other end of the socket, by its kernel credentials (verified as
    ``uid:<n>``; unverified when they cannot be read)."""
    creds = peer_credentials(writer)
    if creds is None:
        return Requester("local", "unknown", identity="")
    verified = f"uid:{creds[1]}"
    try:
        return Requester("local", pwd.getpwuid(creds[1]).pw_name, identity=verified)
    except KeyError:
        return Requester("local", f"uid={creds[1]}", identity=verified)


def is_local_operator(uid: int, socket_gid: int | None, agent_uid: int | None = None) -> bool:
    """Whether the local user ``uid`` is the agent's operator: root, the user the agent runs as
    (the ``edge`` service user under systemd), or a member of the group that owns the control
    socket (the ``edge`` group, which the socket's mode 0660 admits). With the socket's default
    mode that is everyone who can connect; the check keeps it so if the mode is loosened, and a
    peer whose credentials cannot be read is never the operator.

    >>> is_local_operator(0, None)
    True
    """
    if uid == 0 or uid == (os.getuid() if agent_uid is None else agent_uid):
        return True
    if socket_gid is None:
        return False
    try:
        user = pwd.getpwuid(uid)
    except KeyError:
        return False
    return socket_gid in os.getgrouplist(user.pw_name, user.pw_gid)


def nesting_depth(line: bytes, limit: int = NESTING_LIMIT) -> int:
    """How deep ``[`` and ``{`` nest in a JSON text (outside strings), counting up to ``limit + 1``.

    >>> nesting_depth(b'{"op": "status", "args": {"x": "[[["}}')
    2
    """
    depth = deepest = 0
    in_string = escaped = False
    for byte in line:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:  # quote
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):  # [ {
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    break
        elif byte in (0x5D, 0x7D):
            depth -= 1
    return deepest


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


def _reply(result: OpResult) -> bytes:
    return json.dumps(result.as_dict()).encode() + b"\n"


class ControlServer:
    def __init__(self, path: Path, target: OpTarget, *,
                 idle_timeout: float = IDLE_TIMEOUT_SECONDS,
                 max_connections: int = MAX_CONNECTIONS):
        self.path = path
        self.target = target
        self.idle_timeout = idle_timeout
        self.max_connections = max_connections
        self._server: asyncio.AbstractServer | None = None
        self._socket_gid: int | None = None
        self._open: set[asyncio.StreamWriter] = set()
        self._waiting: OrderedDict[asyncio.StreamWriter, None] = OrderedDict()
        """Open connections waiting for a request line, longest-waiting first."""

    @property
    def connections(self) -> int:
        return len(self._open)

    async def start(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        _claim_path(self.path)
        self._server = await asyncio.start_unix_server(self._serve, str(self.path),
                                                       limit=REQUEST_LIMIT)
        os.chmod(self.path, SOCKET_MODE)
        self._socket_gid = os.stat(self.path).st_gid
        log.info("control_socket_listening path=%s", self.path)

    async def close(self) -> None:
        if self._server:
            self._server.close()
            for writer in list(self._open):
                writer.close()
            await self._server.wait_closed()
            self.path.unlink(missing_ok=True)

    def _admit(self, writer: asyncio.StreamWriter) -> bool:
        """Make room for a new connection; False when every open one is busy."""
        if len(self._open) >= self.max_connections:
            if not self._waiting:
                return False
            oldest, _ = self._waiting.popitem(last=False)
            self._open.discard(oldest)
            oldest.close()
            log.warning("control_connection_evicted reason=idle open=%d", len(self._open))
        self._open.add(writer)
        return True

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if not self._admit(writer):
            log.warning("control_connection_refused reason=busy open=%d", len(self._open))
            writer.write(_reply(OpResult(False, f"the agent is busy ({self.max_connections} "
                                         "control connections open); try again shortly")))
            writer.close()
            return
        creds = peer_credentials(writer)
        requester = peer_requester(writer)
        operator = creds is not None and is_local_operator(creds[1], self._socket_gid)
        try:
            while line := await self._next_line(reader, writer):
                result = await self._answer(line, requester, operator)
                writer.write(_reply(result))
                await asyncio.wait_for(writer.drain(), self.idle_timeout)
        except (ConnectionError, TimeoutError):  # client gone, or not reading its replies
            pass
        finally:
            self._waiting.pop(writer, None)
            self._open.discard(writer)
            writer.close()

    async def _next_line(self, reader: asyncio.StreamReader,
                         writer: asyncio.StreamWriter) -> bytes:
        """The next request line; b"" when the connection is done (closed, idle or over-long)."""
        self._waiting[writer] = None
        try:
            return await asyncio.wait_for(reader.readline(), self.idle_timeout)
        except TimeoutError:
            log.info("control_connection_idle seconds=%g", self.idle_timeout)
            writer.write(_reply(OpResult(False, f"no complete request within "
                                         f"{self.idle_timeout:g} s; closing", exit_code=2)))
            return b""
        except ValueError:  # asyncio's LimitOverrunError: a line over REQUEST_LIMIT
            writer.write(_reply(OpResult(False, f"bad request: longer than {REQUEST_LIMIT} "
                                         "bytes", exit_code=2)))
            return b""
        finally:
            self._waiting.pop(writer, None)

    async def _answer(self, line: bytes, requester: Requester, operator: bool) -> OpResult:
        if nesting_depth(line) > NESTING_LIMIT:
            return OpResult(False, f"bad request: JSON nested deeper than {NESTING_LIMIT} "
                            "levels", exit_code=2)
        try:
            request = json.loads(line)
            op, args = request["op"], request.get("args") or {}
            if not isinstance(args, dict):
                raise TypeError("args must be an object")
            if "as" in request:  # `edge-cli mcp` names its client; the peer stays the why
                requester = mcp_requester(str(request["as"]), requester)
        except RecursionError:
            return OpResult(False, "bad request: JSON nested too deeply", exit_code=2)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            return OpResult(False, f"bad request: {exc}", exit_code=2)
        try:
            return await run_op(self.target, str(op), args, requester, operator=operator)
        except Exception as exc:
            log.exception("control_op_failed op=%s by=%s", op, requester.caller)
            return OpResult(False, f"{op} failed inside the agent: {exc}", exit_code=1)
