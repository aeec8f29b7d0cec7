"""The web page's access, as operations of the local operator (``edge-cli web pair|sessions|
revoke``): a one-time code pairing one browser, the paired browsers, and forgetting one. They act
on ``<state_dir>/web-sessions.json`` (:mod:`edge.security.web_sessions`), the agent's when it
runs (through the control socket), this config's when none does (the CLI's direct mode).
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from edge.ops.operation import Kind, Operation
from edge.ops.result import OpResult
from edge.security.web_sessions import CODE_TTL_SECONDS, WebSessions
from edge.tools.base import ToolArgs

if TYPE_CHECKING:
    from edge.core.requester import Requester
    from edge.ops.result import OpTarget

log = logging.getLogger(__name__)


class WebPairArgs(ToolArgs):
    role: Literal["viewer", "operator", "admin"] = Field(
        default="viewer", description="What the browser may do: view; switch outputs (operator); "
                                      "also approve and make outputs safe (admin)")
    name: str | None = Field(default=None, description="The session's name (browser-N when not "
                                                       "given): the caller web:<name>")


class WebRevokeArgs(ToolArgs):
    name: str = Field(description="The session to forget (edge-cli web sessions lists them)")


def _sessions(target: OpTarget) -> WebSessions:
    web = target.loaded.config.web
    return WebSessions.in_state_dir(target.loaded.state_dir, web.max_sessions, web.session_days)


async def pair_op(target: OpTarget, args: dict[str, Any], requester: Requester) -> OpResult:
    try:
        issued = _sessions(target).issue(args.get("role") or "viewer", args.get("name"))
    except ValueError as exc:
        return OpResult(False, str(exc), exit_code=2)
    log.info("web_code_issued name=%s role=%s by=%s", issued.name, issued.role, requester.caller)
    web = target.loaded.config.web
    where = f"http://{web.listen}/" if web.enabled else "the page (set [web] listen first)"
    return OpResult(True, f"Open {where} and enter {issued.code} within "
                    f"{CODE_TTL_SECONDS // 60} minutes: the browser is paired as {issued.name} "
                    f"({issued.role}).",
                    {"code": issued.code, "name": issued.name, "role": issued.role,
                     "expires": issued.expires, "listen": web.listen})


async def sessions_op(target: OpTarget, args: dict[str, Any], requester: Requester) -> OpResult:
    rows = [s.row() for s in _sessions(target).sessions()]
    now = time.time()
    lines = [f"{r['name']}  {r['role']}  last seen {int(now - r['last_seen']) // 60} min ago"
             for r in rows]
    return OpResult(True, "\n".join(lines) or "no browser is paired", {"sessions": rows})


async def revoke_op(target: OpTarget, args: dict[str, Any], requester: Requester) -> OpResult:
    name = str(args.get("name") or "")
    if not _sessions(target).revoke(name):
        return OpResult(False, f"no paired browser is called {name!r} (edge-cli web sessions)",
                        exit_code=2)
    log.info("web_session_revoked name=%s by=%s", name, requester.caller)
    return OpResult(True, f"{name} is no longer paired: its next request is refused", {"name": name})


WEB_OPERATIONS = (
    Operation("web.pair", Kind.OPERATOR, handler=pair_op, args_model=WebPairArgs,
              summary="A one-time code that pairs one browser with the web page, as a viewer, "
                      "an operator or an admin."),
    Operation("web.sessions", Kind.OPERATOR, handler=sessions_op,
              summary="The browsers paired with the web page."),
    Operation("web.revoke", Kind.OPERATOR, handler=revoke_op, args_model=WebRevokeArgs,
              summary="Forget a paired browser: its next request is refused."),
)
