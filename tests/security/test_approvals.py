"""An admin's *Always* is remembered for the requester's verified identity (a chat sender as its
channel verified it; an MCP client by its token, or by the local uid with the client's name),
never for a name the requester gives itself; a requester nobody verified is never covered, and an
"always" for it counts as nothing."""

from __future__ import annotations

import asyncio

from edge.core.requester import Requester
from edge.security.approvals import ApprovalGate
from tests.helpers import until


class Asking:
    """An approver that records what it was asked."""

    supports_approvals = True

    def __init__(self) -> None:
        self.asked: list[tuple[Requester, str]] = []

    async def request_approval(self, ctx: Requester, prompt: str, token: str) -> None:
        self.asked.append((ctx, token))

    async def approval_expired(self, ctx: Requester, token: str) -> None:
        return None


def gate_and_approver() -> tuple[ApprovalGate, Asking]:
    approver = Asking()
    gate = ApprovalGate("supervised", 5, {"telegram": frozenset({"1"})},
                        {"mcp": approver, "telegram": approver})
    return gate, approver


def mcp(client: str, identity: str) -> Requester:
    return Requester("mcp", client, via_model=True, identity=identity)


async def ask(gate: ApprovalGate, approver: Asking, ctx: Requester,
              answer: str | None) -> tuple[bool, str | None]:
    """(whether the admin was asked, the gate's refusal) for switching led with ``ctx`` asking,
    the admin answering ``answer`` if asked."""
    seen = len(approver.asked)
    check = asyncio.create_task(gate.check("gpio:GPIO17", "write", "switch led on", ctx))
    asked = await until(lambda: check.done() or len(approver.asked) > seen)
    if check.done():
        return False, check.result()
    assert asked and answer is not None
    gate.answer("telegram", approver.asked[-1][1], "1", answer)
    return True, await asyncio.wait_for(check, 5)


async def test_always_covers_the_identity_not_the_name():
    gate, approver = gate_and_approver()
    pi = mcp("claude-desktop", "uid:1000 mcp:claude-desktop")
    other_user = mcp("claude-desktop", "uid:1001 mcp:claude-desktop")
    assert await ask(gate, approver, pi, "always") == (True, None)
    assert await ask(gate, approver, pi, None) == (False, None)  # remembered
    assert await ask(gate, approver, other_user, "deny") == (True, "denied by the user")
    by_token = mcp("claude", "token:claude")
    assert await ask(gate, approver, by_token, "always") == (True, None)
    assert await ask(gate, approver, mcp("claude", "token:other"), "deny") == (
        True, "denied by the user")


async def test_nobody_verified_is_never_remembered():
    gate, approver = gate_and_approver()
    named_itself = mcp("claude-desktop", "")
    assert named_itself.verified_as is None
    seen = len(approver.asked)
    check = asyncio.create_task(gate.check("gpio:GPIO17", "write", "switch led on", named_itself))
    await until(lambda: len(approver.asked) > seen)
    (ctx, token), = approver.asked[seen:]
    assert ctx.verified_as is None  # what the channel reads to leave Always out
    assert gate.answer("telegram", token, "1", "always").startswith("Always is not offered here")
    assert not check.done()
    assert gate.answer("telegram", token, "1", "approve") == "Approved."
    assert await asyncio.wait_for(check, 5) is None
    assert await ask(gate, approver, named_itself, "deny") == (True, "denied by the user")


async def test_a_chat_sender_is_remembered_as_its_channel_verified_it():
    gate, approver = gate_and_approver()
    alice = Requester("telegram", "42", "42", via_model=True)
    assert alice.verified_as == "telegram:42"
    assert await ask(gate, approver, alice, "always") == (True, None)
    assert await ask(gate, approver, alice, None) == (False, None)
