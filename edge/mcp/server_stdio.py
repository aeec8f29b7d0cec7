"""``edge-cli mcp``: an MCP server over stdio that is a client of the running agent.

It never opens a board: each tool call is one request on the agent's control socket, carrying
``"as": "mcp:<client>"`` (the client's ``clientInfo.name``), so the agent's policy sees the MCP
client as the caller and keeps the local user who ran the command as the audit trail's "why"
(:func:`edge.control.ops.mcp_requester`). ``ssh pi edge-cli mcp`` is then an MCP server for any
client that can run a command.
"""

from __future__ import annotations

import json
import logging
import socket
from pathlib import Path
from typing import Any

import anyio

from edge.control.client import DaemonNotAnswering, SocketForbidden
from edge.control.ops import OpResult
from edge.core.exc import DaemonUnavailable, EdgeError
from edge.mcp.server import StdioCaller, build_server

log = logging.getLogger(__name__)

READ_TIMEOUT_SECONDS = 30.0
"""An operation that answers from the agent (a read, a list, a fresh sensor measurement)."""
APPROVAL_MARGIN_SECONDS = 30.0
"""An actuation may wait for an admin's approval: up to ``approval_timeout_seconds``, plus this."""
WAITS_FOR_APPROVAL = frozenset({"gpio.write", "gpio.pwm", "gpio.servo", "gpio.safe",
                                "schedules.add", "schedules.remove"})


def ask_agent(paths: list[Path], request: dict[str, Any], timeout: float) -> dict[str, Any]:
    """One request on the first control socket that answers (blocking). Raises
    DaemonUnavailable when no agent is there, SocketForbidden when this user may not use it,
    DaemonNotAnswering when it does not answer in time."""
    for path in paths:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(timeout)
            try:
                sock.connect(str(path))
            except PermissionError:
                raise SocketForbidden(f"an agent is running but you may not use its control "
                                      f"socket {path}; add yourself to the edge group "
                                      "(`sudo usermod -aG edge $USER`)") from None
            except OSError:
                continue  # no agent there (or a stale socket)
            try:
                sock.sendall(json.dumps(request).encode() + b"\n")
                reply = sock.makefile("rb").readline()
            except TimeoutError:
                raise DaemonNotAnswering(f"the agent at {path} did not answer {request['op']} "
                                         f"within {timeout:g} s") from None
            except ConnectionError:
                reply = b""
        if not reply:
            raise DaemonUnavailable(f"the agent at {path} closed the connection without answering")
        answer = json.loads(reply)
        if not isinstance(answer, dict):
            raise DaemonNotAnswering(f"the agent at {path} gave no reply object")
        return answer
    raise DaemonUnavailable("no running agent found at " + ", ".join(map(str, paths)))


class SocketDoor:
    """The running agent's control socket as the MCP server's door."""

    def __init__(self, paths: list[Path], approval_timeout: float):
        self.paths = paths
        self.approval_timeout = approval_timeout

    def timeout(self, op: str) -> float:
        if op in WAITS_FOR_APPROVAL:
            return self.approval_timeout + APPROVAL_MARGIN_SECONDS
        return READ_TIMEOUT_SECONDS

    async def __call__(self, op: str, args: dict[str, Any], caller: str) -> OpResult:
        request = {"op": op, "args": args, "as": caller}
        try:
            answer = await anyio.to_thread.run_sync(ask_agent, self.paths, request,
                                                    self.timeout(op))
        except EdgeError as exc:  # the agent went away, or hangs: the call fails, saying so
            return OpResult(False, f"{exc}; start the agent (`edge-cli run` or `sudo systemctl "
                            "start edge-agent`) and call again")
        return OpResult.from_dict(answer)


def check_agent(paths: list[Path]) -> str | None:
    """None when an agent answers on one of ``paths``; else why not (for stderr)."""
    try:
        ask_agent(paths, {"op": "status", "args": {}}, 5.0)
    except DaemonUnavailable:
        return ("no agent is running, and edge-cli mcp never opens the pins itself; start it "
                "with `edge-cli run` or `sudo systemctl start edge-agent`")
    except EdgeError as exc:
        return str(exc)
    return None


def serve(paths: list[Path], approval_timeout: float) -> None:
    """Speak MCP on stdin and stdout until the client closes them."""
    caller = StdioCaller()
    server = build_server(SocketDoor(paths, approval_timeout), caller, [caller.middleware])
    anyio.run(server.run_stdio_async)
