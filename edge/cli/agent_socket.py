"""Asking the running agent over its control socket, for commands that may do the work
themselves when none runs (reading files, never opening a board behind an agent's back)."""

from __future__ import annotations

import argparse
from typing import Any

from edge.config.locate import load_raw
from edge.control import client
from edge.control.client import SocketForbidden
from edge.core.exc import DaemonUnavailable
from edge.core.ownership import running_agent
from edge.core.paths import lock_candidates, socket_candidates
from edge.ops.result import OpResult


def silent_agent(state_dir: str | None) -> OpResult | None:
    """An agent holds the lock but its socket did not answer: a failure saying so (nobody may
    act behind its back); None when no agent runs."""
    owner = running_agent(lock_candidates(state_dir))
    if owner is None:
        return None
    return OpResult(False, f"an agent is running (pid {owner[1]}, lock {owner[0]}) but its "
                    "control socket did not answer; check `edge-cli logs`, or restart it "
                    "(`sudo systemctl restart edge-agent`)", exit_code=1)


def ask_agent(args: argparse.Namespace, op: str, op_args: dict[str, Any],
              timeout: float | None = None) -> OpResult | None:
    """The running agent's answer to ``op`` over its control socket; None when no agent runs
    (the command may then do the work itself, reading files but never opening a board)."""
    configured = (load_raw(args.config).data.get("paths") or {}).get("state_dir")
    state = configured if isinstance(configured, str) else None
    try:
        return OpResult.from_dict(client.request(socket_candidates(state), op, op_args, timeout))
    except SocketForbidden as exc:
        return OpResult(False, str(exc), exit_code=1)
    except DaemonUnavailable:
        return silent_agent(state)
