"""``[mcp] listen``: the agent serves MCP over streamable HTTP, driven by the SDK's own client.
Off loopback without a token the config check refuses (exit 2); a wrong or missing token is 401,
answered before the SDK sees the request (no session, its body never read) and counted in the
refusal summary; the right token works and the caller is ``mcp:<token name>`` in the audit trail; the
token is a secret (redacted); without ``[mcp]`` the agent imports no ``mcp`` module."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import subprocess
import sys

import httpx

from edge.config.loader import load_config
from edge.core.redaction import secret_values
from tests.helpers import ROOT, cli, until
from tests.mcp.http_agent import free_port, http_session, until_listening

TOKEN = "claude-secret-0123456789"
PINS = """
[channels.cli]
enabled = false
[security]
autonomy = "full"
[boards.gpio.aliases]
led = "GPIO17"
[boards.gpio.pins]
led = { mode = "output", safe = "off" }
"""


def http_config(port: int, token: bool = True) -> str:
    tokens = f'[mcp.tokens]\nclaude = "{TOKEN}"\n' if token else ""
    return f'{PINS}[mcp]\nlisten = "127.0.0.1:{port}"\n{tokens}'


def test_off_loopback_without_a_token_is_refused_by_the_config_check(write_config, isolated_env):
    path = write_config(f'{PINS}[mcp]\nlisten = "0.0.0.0:8765"\n')
    done = cli("config", "check", env={**isolated_env, "EDGE_CONFIG": str(path)})
    assert done.returncode == 2
    assert "mcp" in done.stderr and "not a loopback address" in done.stderr
    with_token = {**isolated_env, "EDGE_CONFIG": str(path), "EDGE_MCP__TOKENS__CLAUDE": TOKEN}
    assert cli("config", "check", env=with_token).returncode == 0


def test_tokens_are_secrets(write_config, isolated_env):
    path = write_config(http_config(8765, token=False))
    loaded = load_config(str(path), env={**isolated_env, "EDGE_MCP__TOKENS__CLAUDE": TOKEN})
    assert "claude" in loaded.config.mcp.tokens
    assert TOKEN in secret_values(loaded.config)


async def test_wrong_or_missing_token_is_401_and_logged(start_agent, caplog, monkeypatch):
    monkeypatch.setattr("edge.mcp.server_connections.REFUSAL_LOG_SECONDS", 0.3)
    port = free_port()
    await start_agent(http_config(port))
    await until_listening(port)
    caplog.set_level(logging.WARNING, logger="edge.mcp.server_connections")
    async with httpx.AsyncClient() as http:
        body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
        wrong = await http.post(f"http://127.0.0.1:{port}/mcp", json=body,
                                headers={"Authorization": "Bearer not-the-token"})
        missing = await http.post(f"http://127.0.0.1:{port}/mcp", json=body)
    assert (wrong.status_code, missing.status_code) == (401, 401)
    assert wrong.headers["www-authenticate"].startswith("Bearer")
    assert wrong.json() == {"error": "a bearer token from [mcp.tokens] is required"}
    await until(lambda: "reasons=no_bearer:1 " in caplog.text)  # the next line, an interval on
    assert "mcp_http_refused count=1 reasons=wrong_bearer:1 peers=127.0.0.1" in caplog.text
    assert TOKEN not in caplog.text


async def test_without_a_token_the_sdk_is_never_reached(start_agent, caplog):
    port = free_port()
    await start_agent(http_config(port))
    await until_listening(port)
    caplog.set_level(logging.DEBUG, logger="mcp")
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json"
                 "\r\nContent-Length: 1000000\r\n\r\n".encode())  # a body announced, never sent
    answer = await asyncio.wait_for(reader.read(), 2)  # answered at once, and closed
    writer.close()
    assert answer.startswith(b"HTTP/1.1 401")
    async with httpx.AsyncClient() as http:
        url = f"http://127.0.0.1:{port}/mcp"
        body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
        refused = [await http.post(url, json=body), await http.get(url, headers={
            "mcp-session-id": "0" * 32}), await http.delete(url, headers={"mcp-session-id": "0" * 32})]
    assert [r.status_code for r in refused] == [401, 401, 401]
    assert not [r for r in caplog.records if r.name.startswith("mcp")]  # no session, no request


async def test_the_right_token_switches_a_pin_as_its_name(start_agent, mock_factory, isolated_env,
                                                          write_config):
    port = free_port()
    await start_agent(http_config(port))
    await until_listening(port)
    async with http_session(port, TOKEN) as session:
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert tools["pin_write"].annotations.destructive_hint is True
        done = await session.call_tool("pin_write", {"pin": "led", "value": "on"})
        assert not done.is_error
        assert done.structured_content["value"] == 1.0
        assert mock_factory.pin(17).state == 1
        outside = await session.call_tool("pin_write", {"pin": "GPIO5", "value": "on"})
        assert outside.is_error
        history = await session.call_tool("history", {"pin": "led"})
    records = history.structured_content["records"]
    assert [(r["caller"], r["door"], r["why"], r["outcome"]) for r in records] == [
        ("mcp:claude", "mcp", "http", "ok")]
    env = {**isolated_env, "EDGE_CONFIG": str(write_config(http_config(port)))}
    listed = json.loads((await asyncio.to_thread(cli, "history", "--json", env=env)).stdout)
    assert {r["caller"] for r in listed["data"]["records"]} == {"mcp:claude"}


async def test_loopback_without_tokens_names_the_client(start_agent, mock_factory):
    port = free_port()
    await start_agent(http_config(port, token=False))
    await until_listening(port)
    async with http_session(port, None) as session:
        done = await session.call_tool("pin_write", {"pin": "led", "value": "on"})
        history = await session.call_tool("history", {})
    assert not done.is_error
    assert history.structured_content["records"][0]["caller"] == "mcp:some-client"


IMPORTS = """
import asyncio, os, sys
from gpiozero.pins.mock import MockFactory, MockPWMPin
from edge.config.loader import load_config
from edge.runtime import Runtime

async def main():
    runtime = Runtime(load_config(), resident=True, pin_factory=MockFactory(pin_class=MockPWMPin),
                      stdin=open(os.devnull))
    task = asyncio.create_task(runtime.run())
    while not runtime.ready.is_set():
        assert not task.done(), task.exception()
        await asyncio.sleep(0.01)
    print(sorted(m for m in sys.modules if m == "mcp" or m.startswith("mcp.")))
    runtime.request_stop("test")
    await task

asyncio.run(main())
"""


def test_only_an_agent_with_mcp_listen_imports_the_sdk(write_config, isolated_env):
    def loaded(config: str) -> list[str]:
        env = {**isolated_env, "EDGE_CONFIG": str(write_config(config))}
        done = subprocess.run([sys.executable, "-c", IMPORTS], env=env, cwd=ROOT,
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout.strip().replace("'", '"'))

    assert loaded(PINS) == []
    assert "mcp" in loaded(http_config(free_port()))


async def test_a_port_in_use_is_a_task_down_not_an_agent_down(start_agent, mock_factory):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = int(taken.getsockname()[1])
        agent = await start_agent(http_config(port))

        def mcp_task() -> dict | None:
            rows = [t for t in agent.runtime.supervised_tasks() if t.name == "mcp-http"]
            row = rows[0].row() if rows else None
            return row if row and row["last_error"] else None

        row = await until(mcp_task)
        assert not row["healthy"] and "Address already in use" in row["last_error"]
        status = await agent.runtime.status()
        assert status["daemon"]["running"] is True
