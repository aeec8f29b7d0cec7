"""The gate's trust rules: ``[security] admins_approve_themselves`` lets an admin's own model turns
through and nobody else's; ``[mcp.trust]`` lets a verified token through for its pins only; an
*Always* is durable when an admin answered it, until restart when the requester did."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import ValidationError

from edge.config.mcp import McpConfig
from edge.config.model import SecurityConfig
from edge.core.requester import Requester
from edge.security.approval_store import ApprovalStore
from edge.security.approvals import ApprovalGate
from tests.helpers import until
from tests.security.test_approvals import Asking, ask

ADMINS = {"telegram": frozenset({"1"})}


def gate_with(approver: Asking, *, admins_approve_themselves: bool = False,
              trusted: dict[str, frozenset[str]] | None = None,
              store: ApprovalStore | None = None) -> ApprovalGate:
    security = SecurityConfig(admins_approve_themselves=admins_approve_themselves,
                              approval_timeout_seconds=5)
    return ApprovalGate.from_config(security, ADMINS, {"telegram": approver, "mcp": approver},
                                    trusted=trusted, store=store)


def model_of(sender: str) -> Requester:
    return Requester("telegram", sender, reply_target=sender, via_model=True)


async def test_an_admin_approves_their_own_model_turns_and_nobody_elses():
    approver = Asking()
    gate = gate_with(approver, admins_approve_themselves=True)
    assert await ask(gate, approver, model_of("1"), None) == (False, None)
    assert await ask(gate, approver, model_of("2"), "deny") == (True, "denied by the user")
    claiming = Requester("mcp", "1", via_model=True, identity="token:one")  # not a chat admin
    assert await ask(gate, approver, claiming, "deny") == (True, "denied by the user")


async def test_by_default_an_admin_is_asked_too():
    approver = Asking()
    gate = gate_with(approver)
    assert await ask(gate, approver, model_of("1"), "approve") == (True, None)


async def test_a_trusted_token_passes_for_its_pins_only():
    approver = Asking()
    gate = gate_with(approver, trusted={"token:claude": frozenset({"gpio:GPIO17"}),
                                        "token:all": frozenset({"*"})})
    claude = Requester("mcp", "claude", via_model=True, identity="token:claude")
    assert await ask(gate, approver, claude, None) == (False, None)  # ask() switches gpio:GPIO17
    assert await gate.check("gpio:GPIO17", "write", "led on", claude) is None
    assert gate.trusts(claude, "gpio:GPIO27", "write") is False
    unverified = Requester("mcp", "claude", via_model=True, identity="")  # the same name only
    assert await ask(gate, approver, unverified, "deny") == (True, "denied by the user")
    everything = Requester("mcp", "all", via_model=True, identity="token:all")
    assert gate.trusts(everything, "uno:D13", "pwm")


async def test_always_is_durable_when_an_admin_answers_and_not_when_the_requester_does(tmp_path):
    approver = Asking()
    path = tmp_path / "approvals.json"
    gate = gate_with(approver, store=ApprovalStore(path))
    assert await ask(gate, approver, model_of("1"), "always") == (True, None)  # an admin
    restarted = gate_with(approver, store=ApprovalStore(path))
    assert restarted.trusts(model_of("1"), "gpio:GPIO17", "write")
    [grant] = ApprovalStore(path).grants()
    assert (grant.identity, grant.granted_by) == ("telegram:1", "telegram:1")


async def test_a_requesters_own_always_lasts_until_restart(tmp_path):
    approver = Asking()
    path = tmp_path / "approvals.json"
    gate = gate_with(approver, store=ApprovalStore(path))
    check = asyncio.create_task(gate.check("gpio:GPIO17", "write", "led on", model_of("2")))
    assert await until(lambda: approver.asked)
    assert gate.answer("telegram", approver.asked[-1][1], "2", "always") == "Approved, and remembered."
    assert await check is None
    assert gate.trusts(model_of("2"), "gpio:GPIO17", "write")
    assert not path.exists()
    assert not gate_with(approver, store=ApprovalStore(path)).trusts(model_of("2"), "gpio:GPIO17",
                                                                    "write")


def test_trust_names_a_token():
    with pytest.raises(ValidationError, match="'claud' is not a token in \\[mcp.tokens\\]"):
        McpConfig(tokens={"claude": "x" * 20}, trust={"claud": ["*"]})


def test_approval_false_is_for_outputs():
    from edge.config.boards import PinConfig

    assert PinConfig(mode="output", approval=False).approval is False
    with pytest.raises(ValidationError, match="approval applies to output and pwm pins, not input"):
        PinConfig(mode="input", approval=False)
