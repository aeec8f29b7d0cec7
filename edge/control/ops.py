"""Operations run through the control socket (daemon) and by the CLI's direct mode (no daemon):
:func:`run_op` finds the operation in the catalog (:mod:`edge.ops.catalog`) and decides who may
ask it; the operation says what it does.

What changes the agent for everyone (``models.select``, ``channel.pair``, ``resume``, the
schedules: :func:`edge.ops.catalog.for_operator`) is for the local operator only: the control
server passes ``operator=True`` for a peer whose kernel credentials make it one (see
:func:`edge.control.server.is_local_operator`); every other caller is refused.

What an operation answers and acts on (:class:`OpResult`, :class:`OpTarget`) is
:mod:`edge.ops.result`'s, named here too for the many callers that read an answer.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from edge.core.requester import Requester
from edge.ops.result import OpResult as OpResult
from edge.ops.result import OpTarget as OpTarget

if TYPE_CHECKING:
    from edge.ops.operation import Operation

MCP_CALLER = re.compile(r"mcp:([A-Za-z][A-Za-z0-9_.-]{0,63})")
"""An MCP client as a caller (``mcp:claude-desktop``): its name starts with a letter, so it never
reads as a chat user's id (Telegram's numbers, Signal's ``+``-numbers)."""


def mcp_requester(caller: str, door: Requester | str, identity: str = "") -> Requester:
    """The requester of an MCP client's call: ``caller`` (``mcp:<client>``), as a model asking
    (under ``supervised`` autonomy its actuations wait for an admin's approval), with the door it
    came through as the audit trail's "why": the local user of the control socket
    (``local:pi``, from the kernel's credentials, :mod:`edge.control.server`) or ``http``.
    A ValueError for any other caller: a socket peer names an MCP client, never a chat user.

    Its identity (what an admin's *Always* is remembered for) is what verified it: over the
    socket the peer's uid with the client's name, over HTTP ``identity`` (its token); empty when
    nothing did, and then *Always* is never offered.

    >>> asked = mcp_requester("mcp:claude", Requester("local", "pi", identity="uid:1000"))
    >>> asked.caller, asked.verified_as
    ('mcp:claude', 'uid:1000 mcp:claude')
    >>> mcp_requester("mcp:claude", "http").verified_as is None
    True
    >>> mcp_requester("telegram:42", "http")
    Traceback (most recent call last):
    ...
    ValueError: "as" must be mcp:<client> (a letter, then letters, digits, '.', '_' or '-'), not 'telegram:42'
    """
    match = MCP_CALLER.fullmatch(caller)
    if match is None:
        raise ValueError("\"as\" must be mcp:<client> (a letter, then letters, digits, '.', '_' or "
                         f"'-'), not {caller!r}")
    if isinstance(door, Requester):
        peer = door.verified_as
        why, identity = door.caller, f"{peer} {caller}" if peer else ""
    else:
        why = door
    return Requester("mcp", match.group(1), via_model=True, why=why, identity=identity)


async def run_op(target: OpTarget, op: str, args: dict[str, Any],
                 requester: Requester, *, operator: bool = False) -> OpResult:
    from edge.ops.catalog import CATALOG  # the daemon's side: the client path stays light
    from edge.ops.operation import Kind

    operation = CATALOG.get(op)
    if operation is None:
        return OpResult(False, f"unknown operation {op!r}", exit_code=2)
    if operation.kind in (Kind.OPERATOR, Kind.CHANGE):
        if requester.channel == "mcp":
            return await _mcp_operator_op(operation, target, args, requester, operator)
        if not operator:
            return OpResult(False, f"{op} is for the local operator only (root, the agent's "
                            f"user, or a member of the control socket's group); "
                            f"{requester.caller} is not one", exit_code=1)
        requester = Requester("cli", requester.sender)  # as trusted as the agent's own terminal
    return await operation.run(target, args, requester)


async def _mcp_operator_op(operation: Operation, target: OpTarget, args: dict[str, Any],
                           requester: Requester, operator: bool) -> OpResult:
    """An MCP client may change schedules (an operation that changes the agent) where the policy
    lets that caller (the schedule tools ask the approval gate who is an admin), and only
    through the local operator's socket; the operator's own operations are not for MCP clients."""
    from edge.ops.operation import Kind

    if operation.kind is Kind.CHANGE and operator:
        return await operation.run(target, args, requester)
    return OpResult(False, f"{operation.name} is for the local operator only; "
                    f"{requester.caller} (an MCP client, {requester.why or 'no door'}) may not",
                    exit_code=1)
