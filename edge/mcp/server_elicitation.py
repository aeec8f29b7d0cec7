"""Asking the person at the MCP client (MCP elicitation) to approve an actuation, rather than a
chat admin, with ``[mcp] ask_at_client = true``: for a client that declared the ``elicitation``
capability in its ``initialize``, the approval gate (:meth:`edge.security.approvals.ApprovalGate.
asking_client`) sends the prompt as a form with one optional box, *Always* (offered only for a
caller its token verified); accept approves, decline or cancel refuses, no answer within
``[security] approval_timeout_seconds`` refuses. A client without the capability is asked
through the chat admins, as before.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcp import types
from pydantic import BaseModel, Field

if TYPE_CHECKING:
    from mcp.server.mcpserver import Context

    from edge.security.approvals import ClientAsk

ELICITATION = types.ClientCapabilities(elicitation=types.ElicitationCapability())


class Approve(BaseModel):
    """Accept approves; decline refuses."""


class ApproveOrAlways(Approve):
    always: bool = Field(default=False, description="Also allow this from now on, without "
                                                    "asking (until the agent restarts)")


def client_ask(ctx: Context) -> ClientAsk | None:
    """How to ask the person at ``ctx``'s client, or None when its client cannot be asked."""
    if not ctx.session.check_client_capability(ELICITATION):
        return None

    async def ask(prompt: str, offer_always: bool) -> str:
        result = await ctx.elicit(prompt, ApproveOrAlways if offer_always else Approve)
        if result.action != "accept":
            return "deny"
        return "always" if getattr(result.data, "always", False) else "approve"
    return ask
