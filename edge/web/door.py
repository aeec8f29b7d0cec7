"""What a paired browser may ask, derived from the operation catalog (:mod:`edge.ops.catalog`):
a viewer the operations that read (``Kind.READ``), an operator also those that actuate, an admin
also those that make outputs safe. Whatever changes the agent for everyone (``CHANGE``,
``OPERATOR``) stays the local operator's. Every call goes through :func:`edge.control.ops.run_op`
as ``web:<session name>``, the same path as the control socket and MCP: the allowlist, the
interlocks, the budgets, the approvals, the receipts and the audit trail see it as any door.

>>> role_for("pins"), role_for("gpio.write"), role_for("gpio.safe"), role_for("models.select")
('viewer', 'operator', 'admin', None)
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from edge.control.ops import OpResult, run_op
from edge.core.requester import Requester

if TYPE_CHECKING:
    from edge.ops.result import OpTarget
    from edge.security.web_sessions import WebSession


def role_for(op: str) -> str | None:
    """The least role that may ask ``op`` from the page; None: no role may (or no such op)."""
    from edge.ops.catalog import CATALOG
    from edge.ops.operation import MAKES_SAFE, Kind

    operation = CATALOG.get(op)
    if operation is None or operation.kind in (Kind.CHANGE, Kind.OPERATOR):
        return None
    if operation.kind is Kind.READ:
        return "viewer"
    return "admin" if operation.hints == MAKES_SAFE else "operator"


def requester_of(session: WebSession) -> Requester:
    """``web:<name>``: verified by the session's token (what an approval remembers it by)."""
    return Requester("web", session.name, why="web")


async def ask(target: OpTarget, session: WebSession, op: str, args: dict[str, Any]) -> OpResult:
    """Run ``op`` for ``session`` when its role may; a refusal is a result (exit 1)."""
    role = role_for(op)
    if role is None:
        return OpResult(False, f"{op} is not offered on the web page", exit_code=2)
    if not session.may(role):
        return OpResult(False, f"{op} needs a {role} session; {session.name} is a {session.role} "
                        f"(pair again with `edge-cli web pair --{role}`)")
    result = await run_op(target, op, args, requester_of(session))
    data = json.loads(json.dumps(result.data, default=str))  # as the socket would carry it
    message = result.message
    words = _words(op)
    if result.ok and not message and words is not None:  # data alone (status): as edge-cli says it
        message = words(data)
    return OpResult(result.ok, message, data, result.exit_code)


def _words(op: str) -> Callable[[dict[str, Any]], str] | None:
    from edge.ops.catalog import CATALOG

    operation = CATALOG.get(op)
    return operation.words if operation is not None else None


async def safe_state(target: OpTarget, session: WebSession) -> OpResult:
    """Every output pin to its safe level (``gpio.safe`` for each, in turn), for an admin."""
    pins = await run_op(target, "pins", {}, requester_of(session))
    outputs = [p for p in pins.data.get("pins", []) if p.get("mode") in ("output", "pwm", "servo")]
    done: list[dict[str, Any]] = []
    for pin in outputs:
        name = f"{pin['board']}:{pin['pin']}" if pin.get("board") else pin["pin"]
        result = await ask(target, session, "gpio.safe", {"pin": name})
        done.append({"pin": name, "ok": result.ok, "message": result.message})
    failed = [d for d in done if not d["ok"]]
    return OpResult(not failed, f"{len(done) - len(failed)} of {len(done)} outputs at their safe "
                    "level", {"outputs": done})
