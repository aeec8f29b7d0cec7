"""Who may change the agent for everyone: admins of a network channel and the local terminal.
Non-admins' /status and /models show no paths, URLs or error text; approval prompts name the
real pin; approval tokens are answered in any case."""

from __future__ import annotations

import asyncio

import pytest

from edge.agent.commands import CommandContext, run_command
from edge.config.model import Config
from edge.core.requester import Requester
from edge.hardware import build_hardware
from edge.providers.factory import create_provider
from edge.security.approvals import ApprovalGate, Decision, PendingApproval
from edge.status import format_status

ADMINS = {"telegram": frozenset({"1"}), "signal": frozenset({"+4900"})}


@pytest.fixture
async def switch():
    provider = Config.model_validate({"provider": {
        "name": "local", "base_url": "http://127.0.0.1:9/v1", "model": "small",
        "fallbacks": [{"name": "remote", "base_url": "http://127.0.0.1:9/v2", "model": "big"}],
    }}).provider
    built = create_provider(provider)
    yield built
    await built.aclose()


def context(requester: Requester, switch=None, seen: list | None = None) -> CommandContext:
    async def status_text(full: bool = True) -> str:
        if seen is not None:
            seen.append(full)
        return "full" if full else "public"

    return CommandContext({}, status_text, requester, provider=switch, admins=ADMINS)


@pytest.mark.parametrize("requester", [Requester("telegram", "2"), Requester("signal", "+4911"),
                                       Requester("telegram", "+4900")])
async def test_a_non_admin_cannot_switch_the_model(switch, requester):
    reply = await run_command("/model remote", context(requester, switch))
    assert "Only an admin can switch the model" in reply
    assert switch.name == "local"
    assert "Current model: small" in await run_command("/model", context(requester, switch))


@pytest.mark.parametrize("requester", [Requester("telegram", "1"), Requester("signal", "+4900"),
                                       Requester("cli", "pi")])
async def test_an_admin_or_the_local_terminal_switches_the_model(switch, requester):
    reply = await run_command("/model remote", context(requester, switch))
    assert "Now using big on remote" in reply and switch.name == "remote"


async def test_models_list_hides_provider_urls_from_non_admins(switch):
    public = await run_command("/models", context(Requester("telegram", "2"), switch))
    assert "small" in public and "big" in public and "127.0.0.1" not in public
    full = await run_command("/models", context(Requester("telegram", "1"), switch))
    assert "http://127.0.0.1:9/v1" in full


async def test_status_is_public_for_non_admins_and_full_for_admins():
    seen: list[bool] = []
    assert await run_command("/status", context(Requester("telegram", "2"), seen=seen)) == "public"
    assert await run_command("/status", context(Requester("telegram", "1"), seen=seen)) == "full"
    assert await run_command("/status", context(Requester("cli", "pi"), seen=seen)) == "full"
    assert seen == [False, True, True]


STATUS = {
    "daemon": {"running": True, "version": "1", "pid": 7, "uptime_seconds": 3},
    "config": "/etc/edge-agent/config.toml",
    "boards": [{"name": "uno", "kind": "arduino", "connected": False,
                "detail": "/dev/ttyACM0: [Errno 2] No such file"}],
    "channels": [{"name": "telegram", "healthy": False, "down_since": "12:00",
                  "last_error": "ConnectError: https://api.telegram.org/bot123:SECRETtoken/getMe"}],
    "provider": {"configured": True, "model": "gpt", "base_url": "https://llm.internal:8443/v1"},
    "memory": {"backend": "sqlite", "path": "/var/lib/edge-agent/memory/brain.db",
               "entries": 3, "bytes": 100},
    "recent_errors": [{"time": 0, "level": "error", "logger": "edge.x",
                       "message": "open /var/lib/edge-agent/x failed api_key=sk-abcdef"}],
}


def test_a_non_admins_status_has_no_paths_urls_or_error_text():
    text = format_status(STATUS, full=False)
    for leak in ("/etc/", "/dev/", "/var/", "https://", "llm.internal", "ConnectError",
                 "Errno", "SECRET", "sk-"):
        assert leak not in text, leak
    assert "board uno (arduino): not connected" in text and "provider: gpt" in text
    assert "1 recent warnings or errors" in text


def test_errors_in_the_full_status_are_redacted_like_the_logs():
    text = format_status(STATUS)
    assert "/etc/edge-agent/config.toml" in text and "https://llm.internal:8443/v1" in text
    assert "SECRETtoken" not in text and "bot***" in text
    assert "sk-abcdef" not in text and "api_key=***" in text


async def test_the_approval_prompt_names_the_real_pin_not_the_models_words(default_config,
                                                                          mock_factory):
    approvers: dict[str, object] = {}
    gate = ApprovalGate.from_config(default_config.config.security, approvers=approvers)
    hardware = build_hardware(default_config.config, resident=True, pin_factory=mock_factory,
                              approvals=gate)
    prompts: list[str] = []

    class Approver:
        supports_approvals = True

        async def request_approval(self, ctx, prompt, token):
            prompts.append(prompt)
            # answered with the token in capitals, as a phone keyboard may send it
            asyncio.get_running_loop().call_soon(
                lambda: gate.answer("telegram", token.upper(), "42", Decision.APPROVE))

    approvers["telegram"] = Approver()
    await hardware.start()
    try:
        asker = Requester("telegram", "42", "42", via_model=True)
        await hardware.write("BOARD11", True, asker)
        assert mock_factory.pin(17).state == 1  # approved: the write went ahead
    finally:
        await hardware.shutdown()
    assert prompts == ["Approve: switch gpio:GPIO17 (led) on?"]


def test_approval_tokens_are_case_insensitive():
    gate = ApprovalGate()

    async def scenario():
        future = asyncio.get_running_loop().create_future()
        gate._pending["a1b2c3"] = PendingApproval("a1b2c3", "signal:42", future)
        assert gate.answer("signal", " A1B2C3 ", "42", Decision.DENY) == "Denied."
        return await future

    assert asyncio.run(scenario()) is Decision.DENY


def test_only_the_asker_on_their_own_channel_may_answer():
    """An MCP client named like someone's chat id cannot approve its own actuation from that
    chat: the requester is matched by channel and sender together."""
    gate = ApprovalGate()

    async def scenario():
        future = asyncio.get_running_loop().create_future()
        gate._pending["d4e5f6"] = PendingApproval("d4e5f6", "mcp:abcdef12", future)
        refused = gate.answer("signal", "d4e5f6", "abcdef12", Decision.APPROVE)
        return refused, future.done()

    refused, done = asyncio.run(scenario())
    assert refused.startswith("Only the person who asked") and not done


def test_admins_are_per_channel_and_the_terminal_is_the_operator():
    gate = ApprovalGate(admins=ADMINS)
    assert gate.is_admin(Requester("telegram", "1"))
    assert not gate.is_admin(Requester("signal", "1"))
    assert gate.is_admin(Requester("cli", "anyone"))
    assert not gate.is_admin(Requester("telegram", "2"))
