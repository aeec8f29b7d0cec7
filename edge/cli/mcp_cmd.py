"""``edge-cli mcp``: the running agent's pins, sensors, status, history and schedules as an MCP
server over stdio, for any MCP client that runs a command::

    {"mcpServers": {"pi": {"command": "ssh", "args": ["pi", "edge-cli", "mcp"]}}}

It is a client of the running agent (its control socket), never a second owner of the pins: with
no agent running it says so on stderr and exits 1, as it does where MCP is not available (32-bit
Pi OS). The caller is ``mcp:<client>`` (the client's name from its ``initialize``), in the
policy, the rate limits, the approvals and ``edge-cli history``.
"""

from __future__ import annotations

import argparse
import sys
import threading
from pathlib import Path

from edge.config.locate import load_raw
from edge.core.exc import DaemonUnavailable, EdgeError
from edge.core.paths import socket_candidates
from edge.core.wheels import mcp_sdk_unavailable


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser],
             common: argparse.ArgumentParser) -> None:
    parser = sub.add_parser(
        "mcp", parents=[common], help="serve the running agent's pins to MCP clients (stdio)",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.set_defaults(handler=run)


def _approval_timeout(data: dict[str, object]) -> float:
    """``[security] approval_timeout_seconds`` as the file says (the agent's own default else)."""
    security = data.get("security")
    value = security.get("approval_timeout_seconds") if isinstance(security, dict) else None
    try:
        return float(value) if value is not None else 120.0
    except (TypeError, ValueError):
        return 120.0


class AgentProbe:
    """Whether an agent answers on one of ``paths``, asked on a thread from the moment it is
    made: the round trip waits on the socket while the SDK loads, not before."""

    def __init__(self, paths: list[Path]):
        self._problem: str | None = None
        self._thread = threading.Thread(target=self._ask, args=(paths,), name="agent-probe",
                                        daemon=True)
        self._thread.start()

    def _ask(self, paths: list[Path]) -> None:
        from edge.control.client import request

        try:
            request(paths, "status", {}, 5.0)
        except DaemonUnavailable:
            self._problem = ("no agent is running, and edge-cli mcp never opens the pins itself; "
                             "start it with `edge-cli run` or `sudo systemctl start edge-agent`")
        except EdgeError as exc:
            self._problem = str(exc)

    def problem(self) -> str | None:
        """None when the agent answered; else why not (for stderr)."""
        self._thread.join()
        return self._problem


def run(args: argparse.Namespace) -> int:
    raw = load_raw(args.config)
    state_dir = (raw.data.get("paths") or {}).get("state_dir")
    paths = socket_candidates(state_dir if isinstance(state_dir, str) else None)
    reason = mcp_sdk_unavailable()
    if reason is not None:
        print(f"edge-cli mcp: {reason}", file=sys.stderr)
        return 1
    probe = AgentProbe(paths)
    from edge.mcp.server_stdio import serve  # the SDK: only for this command

    problem = probe.problem()
    if problem is not None:  # before a word of MCP: the client shows stderr and the exit
        print(f"edge-cli mcp: {problem}", file=sys.stderr)
        return 1
    serve(paths, _approval_timeout(raw.data))
    return 0
