"""A real agent on mock pins with ``[web] listen`` on a loopback port, and browsers paired with
it through ``web.pair`` (the operation ``edge-cli web pair`` asks)."""

from __future__ import annotations

import pytest

from edge.security.web_sessions import WebSessions
from tests.mcp.http_agent import free_port, until_listening

PINS = """
[channels.cli]
enabled = false
[security]
autonomy = "full"
[boards.gpio.aliases]
led = "GPIO17"
fan = "GPIO27"
{more_aliases}
[boards.gpio.pins]
led = {{ mode = "output", safe = "off", max_on_seconds = 600 }}
fan = {{ mode = "output", safe = "off" }}
{more_pins}
[web]
listen = "127.0.0.1:{port}"
pair_attempts_per_minute = {attempts}
max_streams = {streams}
"""


class WebAgent:
    def __init__(self, agent, port: int):
        self.agent = agent
        self.port = port
        self.url = f"http://127.0.0.1:{port}"

    @property
    def sessions(self) -> WebSessions:
        return self.agent.runtime.web.sessions

    def code(self, role: str = "viewer", name: str | None = None) -> str:
        return self.sessions.issue(role, name).code


@pytest.fixture
def web_agent(start_agent):
    async def start(attempts: int = 5, streams: int = 16, extra: str = "", more_aliases: str = "",
                    more_pins: str = "") -> WebAgent:
        port = free_port()
        agent = await start_agent(PINS.format(port=port, attempts=attempts, streams=streams,
                                              more_aliases=more_aliases, more_pins=more_pins) + extra)
        await until_listening(port)
        return WebAgent(agent, port)
    return start
