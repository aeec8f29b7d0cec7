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

from edge.config.locate import load_raw
from edge.core.paths import socket_candidates


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


def run(args: argparse.Namespace) -> int:
    raw = load_raw(args.config)
    state_dir = (raw.data.get("paths") or {}).get("state_dir")
    paths = socket_candidates(state_dir if isinstance(state_dir, str) else None)
    from edge.config.mcp import sdk_unavailable

    reason = sdk_unavailable()
    if reason is not None:
        print(f"edge-cli mcp: {reason}", file=sys.stderr)
        return 1
    from edge.mcp.server_stdio import check_agent, serve  # the SDK: only for this command

    problem = check_agent(paths)
    if problem is not None:  # before a word of MCP: the client shows stderr and the exit
        print(f"edge-cli mcp: {problem}", file=sys.stderr)
        return 1
    serve(paths, _approval_timeout(raw.data))
    return 0
