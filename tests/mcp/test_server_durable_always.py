"""An admin's *Always* for an MCP token is durable: it survives the agent's restart, ``edge-cli
approvals`` lists it (who, what, granted by whom and when), and once revoked the token's caller
is asked again."""

from __future__ import annotations

import asyncio
import json
import stat

from tests.fakes.telegram_server import FakeTelegram, telegram_config
from tests.helpers import cli
from tests.mcp.http_agent import free_port, http_session, until_listening
from tests.mcp.test_server_approvals import CLAUDE, OTHER, next_prompt, press, prompts_to
from tests.mcp.test_server_stdio import text
from tests.mcp.test_server_trust import PINS, switch


def config(telegram: FakeTelegram, port: int) -> str:
    extra = 'admins = ["42"]\n[security]\nautonomy = "supervised"\napproval_timeout_seconds = 30\n'
    return (telegram_config(telegram, extra) + PINS + f'[mcp]\nlisten = "127.0.0.1:{port}"\n'
            + f'[mcp.tokens]\nclaude = "{CLAUDE}"\nother = "{OTHER}"\n')


async def approvals(*args: str, env: dict[str, str]) -> tuple[int, dict]:
    done = await asyncio.to_thread(cli, "approvals", *args, "--json", env=env)
    return done.returncode, json.loads(done.stdout)


async def test_an_admins_always_survives_a_restart_is_listed_and_revoked(
        telegram, start_agent, write_config, isolated_env, mock_factory, tmp_path):
    port = free_port()
    env = {**isolated_env, "EDGE_CONFIG": str(write_config(config(telegram, port)))}
    agent = await start_agent(config(telegram, port))
    await until_listening(port)
    async with http_session(port, CLAUDE) as claude:
        call = asyncio.create_task(switch(claude, "led"))
        press(telegram, 42, await next_prompt(telegram, 42, 0), "Always")
        assert not (await call).is_error and mock_factory.pin(17).state == 1
    await agent.stop()
    stored = tmp_path / "state" / "approvals.json"
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600

    await start_agent(config(telegram, port))  # a restart: the same state directory
    await until_listening(port)
    async with http_session(port, CLAUDE) as claude, http_session(port, OTHER) as other:
        assert not (await switch(claude, "led", "off")).is_error  # no prompt: remembered
        assert len(prompts_to(telegram, 42)) == 1 and mock_factory.pin(17).state == 0
        code, listed = await approvals("list", env=env)
        assert code == 0
        [grant] = listed["data"]["grants"]
        assert (grant["identity"], grant["target"], grant["action"], grant["granted_by"]) == (
            "token:claude", "gpio:GPIO17", "write", "telegram:42")
        assert grant["granted_at"].endswith("+00:00")
        call = asyncio.create_task(switch(other, "led"))  # covers that token and no other
        press(telegram, 42, await next_prompt(telegram, 42, 1), "Deny")
        assert (await call).is_error

        code, revoked = await approvals("revoke", grant["id"], env=env)
        assert code == 0 and revoked["data"]["id"] == grant["id"]
        assert (await approvals("list", env=env))[1]["data"]["grants"] == []
        call = asyncio.create_task(switch(claude, "led"))  # asked again
        press(telegram, 42, await next_prompt(telegram, 42, 2), "Deny")
        denied = await call
        assert denied.is_error and "denied by the user" in text(denied)
        assert mock_factory.pin(17).state == 0
        code, unknown = await approvals("revoke", grant["id"], env=env)
    assert code == 2 and not unknown["ok"] and "no durable approval" in unknown["error"]


async def test_the_cli_lists_and_revokes_with_no_agent_running(isolated_env, write_config,
                                                               tmp_path):
    from edge.security.approval_store import ApprovalStore

    env = {**isolated_env, "EDGE_CONFIG": str(write_config("[boards.gpio.pins]\n"))}
    store = ApprovalStore(tmp_path / "state" / "approvals.json")
    grant = store.grant("telegram:7", "gpio:GPIO17", "write", "telegram:42")
    listing = await asyncio.to_thread(cli, "approvals", env=env)
    assert listing.returncode == 0
    assert f"{grant.id}  telegram:7  write gpio:GPIO17  granted by telegram:42" in listing.stdout
    assert (await approvals("revoke", grant.id, env=env))[0] == 0
    assert store.grants() == []
