"""``Host`` and ``Origin`` are checked for every listen address, not only the SDK's three
loopback names (the MCP specification's defence against DNS rebinding). Here the agent listens on
``127.0.0.2`` with no tokens, as a rebinding page would find it: a request naming another host, or
sent by a page from another origin, is refused before the SDK sees it and nothing switches; the
SDK's own client, which names the listen address, works."""

from __future__ import annotations

import httpx
import pytest

from tests.mcp.http_agent import free_port, http_session, until_listening

HOST = "127.0.0.2"
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
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "page", "version": "1"}}}
SWITCH = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
          "params": {"name": "pin_write", "arguments": {"pin": "led", "value": "on"}}}
ACCEPT = {"Accept": "application/json, text/event-stream"}


def config(port: int) -> str:
    return f'{PINS}[mcp]\nlisten = "{HOST}:{port}"\n'


async def rebinding_page(port: int, headers: dict[str, str]) -> list[int]:
    """What a page does once its name points here: initialize, then switch the pin; the HTTP
    status of each step."""
    url = f"http://{HOST}:{port}/mcp"
    async with httpx.AsyncClient(headers={**ACCEPT, **headers}) as http:
        opened = await http.post(url, json=INITIALIZE)
        session = opened.headers.get("mcp-session-id")
        extra = {"mcp-session-id": session, "mcp-protocol-version": "2025-06-18"} if session else {}
        if session:
            await http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                            headers=extra)
        switched = await http.post(url, json=SWITCH, headers=extra)
    return [opened.status_code, switched.status_code]


@pytest.fixture
async def agent_on_an_alias(start_agent) -> int:
    port = free_port(HOST)
    await start_agent(config(port))
    await until_listening(port, HOST)
    return port


async def test_a_rebinding_page_is_refused_and_nothing_switches(agent_on_an_alias, mock_factory):
    port = agent_on_an_alias
    assert await rebinding_page(port, {"Host": f"evil.example:{port}"}) == [421, 421]
    assert mock_factory.pin(17).state == 0
    assert await rebinding_page(port, {"Origin": f"http://evil.example:{port}"}) == [403, 403]
    assert mock_factory.pin(17).state == 0
    assert await rebinding_page(port, {"Origin": "null"}) == [403, 403]  # a sandboxed frame
    assert mock_factory.pin(17).state == 0


async def test_the_listen_address_itself_works(agent_on_an_alias, mock_factory):
    port = agent_on_an_alias
    async with http_session(port, None, host=HOST) as session:  # Host: 127.0.0.2:PORT
        done = await session.call_tool("pin_write", {"pin": "led", "value": "on"})
    assert not done.is_error
    assert mock_factory.pin(17).state == 1


async def test_a_page_on_this_machine_or_a_listed_host_may_call(start_agent, mock_factory):
    port = free_port(HOST)
    await start_agent(config(port) + 'allowed_hosts = ["pi.example.com"]\n')
    await until_listening(port, HOST)
    assert await rebinding_page(port, {"Origin": "http://localhost:6274"}) == [200, 200]
    assert mock_factory.pin(17).state == 1
    assert await rebinding_page(port, {"Host": "pi.example.com"}) == [200, 200]
    assert await rebinding_page(port, {"Host": "evil.example"}) == [421, 421]
