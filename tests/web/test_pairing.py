"""Pairing a browser: ``edge-cli web pair|sessions|revoke`` through the running agent's control
socket, and an admin's ``/web`` in chat; a revoked session is refused from its next request."""

from __future__ import annotations

import asyncio
import json

import httpx

from edge.agent.commands import CommandContext, run_command
from edge.core.requester import Requester
from tests.helpers import cli


async def edge_cli(env: dict, *args: str) -> dict:
    done = await asyncio.to_thread(cli, "web", *args, "--json", env=env)
    return {"code": done.returncode, **json.loads(done.stdout)}


async def test_edge_cli_pairs_lists_and_revokes(web_agent, isolated_env, tmp_path):
    agent = await web_agent()
    env = {**isolated_env, "EDGE_CONFIG": str(tmp_path / "config.toml")}
    issued = await edge_cli(env, "pair", "--operator", "--name", "phone")
    assert issued["code"] == 0 and issued["via"] == "daemon", issued
    assert issued["data"]["role"] == "operator" and issued["data"]["listen"].endswith(str(agent.port))
    async with httpx.AsyncClient() as http:
        paired = await http.post(f"{agent.url}/api/pair", json={"code": issued["data"]["code"]})
        assert paired.json()["name"] == "phone"
        listed = await edge_cli(env, "sessions")
        assert [(s["name"], s["role"]) for s in listed["data"]["sessions"]] == [("phone", "operator")]
        assert (await http.get(f"{agent.url}/api/session")).status_code == 200
        revoked = await edge_cli(env, "revoke", "phone")
        assert revoked["code"] == 0
        assert (await http.get(f"{agent.url}/api/session")).status_code == 401
    unknown = await edge_cli(env, "revoke", "phone")
    assert unknown["code"] == 2


async def test_an_admins_web_command_issues_a_code(web_agent):
    agent = await web_agent()

    async def status_text(full: bool = True) -> str:
        return ""

    def ctx(sender: str) -> CommandContext:
        return CommandContext({}, status_text, Requester("telegram", sender),
                              admins={"telegram": frozenset({"42"})}, web_codes=agent.sessions)

    refused = await run_command("/web admin", ctx("7"))
    answer = await run_command("/web admin greenhouse-tablet", ctx("42"))
    assert refused is not None and "Only an admin" in refused
    assert answer is not None and "as greenhouse-tablet (admin)" in answer
    code = answer.split("enter ")[1].split()[0]
    async with httpx.AsyncClient() as http:
        paired = await http.post(f"{agent.url}/api/pair", json={"code": code})
    assert paired.json()["role"] == "admin"


def test_the_page_and_mcp_need_their_own_ports(write_config, isolated_env):
    path = write_config('[web]\nlisten = "127.0.0.1:8765"\n[mcp]\nlisten = "127.0.0.1:8765"\n')
    done = cli("config", "check", env={**isolated_env, "EDGE_CONFIG": str(path)})
    assert done.returncode == 2 and "give the page another port" in done.stderr
    path.write_text('[web]\nlisten = "0.0.0.0:8080"\n[mcp]\nlisten = "127.0.0.1:8765"\n')
    assert cli("config", "check", env={**isolated_env, "EDGE_CONFIG": str(path)}).returncode == 0
