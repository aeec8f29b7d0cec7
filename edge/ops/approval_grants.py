"""The durable *Always* grants, as operations of the local operator (``edge-cli approvals
[list]``, ``edge-cli approvals revoke ID``) and of a chat admin (``/approvals``, ``/approvals
revoke ID``). They act on ``<state_dir>/approvals.json`` (:mod:`edge.security.approval_store`):
the agent's when it runs (through the control socket), this config's when none does (the CLI's
direct mode); the running agent reads the file again when it changes.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from pydantic import Field

from edge.ops.operation import Chat, Kind, Operation
from edge.ops.result import OpResult
from edge.security.approval_store import APPROVALS_FILE, ApprovalStore
from edge.tools.base import ToolArgs

if TYPE_CHECKING:
    from edge.core.requester import Requester
    from edge.ops.result import OpTarget

log = logging.getLogger(__name__)


class ApprovalRevokeArgs(ToolArgs):
    id: str = Field(description="The grant to revoke (edge-cli approvals lists them)")


def _store(target: OpTarget) -> ApprovalStore:
    return ApprovalStore(target.loaded.state_dir / APPROVALS_FILE)


async def list_op(target: OpTarget, args: dict[str, Any], requester: Requester) -> OpResult:
    rows = [vars(g) for g in _store(target).grants()]
    lines = [f"{r['id']}  {r['identity']}  {r['action']} {r['target']}  granted by "
             f"{r['granted_by']} at {r['granted_at']}" for r in rows]
    return OpResult(True, "\n".join(lines) or "no durable approval (an admin's Always makes one)",
                    {"grants": rows})


async def revoke_op(target: OpTarget, args: dict[str, Any], requester: Requester) -> OpResult:
    grant_id = str(args.get("id") or "")
    try:
        gone = _store(target).revoke(grant_id)
    except OSError as exc:
        return OpResult(False, f"cannot write {_store(target).path}: {exc.strerror or exc}; run "
                        "this as the agent's user", exit_code=1)
    if gone is None:
        return OpResult(False, f"no durable approval has the id {grant_id!r} (edge-cli approvals "
                        "lists them)", {"id": grant_id}, exit_code=2)
    log.info("approval_revoked id=%s by=%s", gone.id, requester.caller)
    return OpResult(True, f"Revoked {gone.id}: {gone.identity} asks again before {gone.action} "
                    f"on {gone.target}.", {"id": gone.id, "grant": vars(gone)})


def _listing(words: list[str]) -> dict[str, Any] | None:
    return {} if words in ([], ["list"]) else None


def _revoking(words: list[str]) -> dict[str, Any] | None:
    return {"id": words[1]} if len(words) == 2 and words[0].lower() == "revoke" else None


APPROVAL_OPERATIONS = (
    Operation("approvals", Kind.OPERATOR, handler=list_op,
              summary="The durable approvals (an admin's Always): who, what, granted by whom "
                      "and when.",
              chat=(Chat("/approvals", "durable approvals (admins)", _listing),)),
    Operation("approvals.revoke", Kind.OPERATOR, handler=revoke_op, args_model=ApprovalRevokeArgs,
              summary="Revoke a durable approval: its caller asks again.",
              chat=(Chat("/approvals revoke ID", "revoke a durable approval (admins)",
                         _revoking),)),
)
