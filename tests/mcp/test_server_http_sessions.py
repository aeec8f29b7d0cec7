"""MCP sessions over HTTP are capped in number (``max_sessions``, here the default) and idle time
(``session_idle_seconds``): an agent process (``edge-cli run``) given 1,000 abandoned sessions
(initialized, never used or closed) never holds more than the cap (beyond it a new one is
answered 503), forgets them once idle, and its resident memory is back within 2 MB of what it
was before (once warm: after one client's whole session and one full house, so that code loaded
and memory taken once are not counted); the SDK's own client then works as ever."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from edge.config.mcp import McpConfig
from tests.helpers import EDGE_CLI, ROOT, wait_for
from tests.mcp.http_agent import free_port, http_session, until_listening

TOKEN = "claude-secret-0123456789"
CAP = McpConfig().max_sessions
IDLE_SECONDS = 3.0
ABANDONED = 1000
HEADERS = {"Authorization": f"Bearer {TOKEN}", "Accept": "application/json, text/event-stream"}
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "abandoner", "version": "1"}}}


def config(port: int) -> str:
    return f"""
[channels.cli]
enabled = false
[memory]
backend = "none"
[security]
autonomy = "full"
[boards.gpio.pins]
GPIO17 = {{ mode = "output", safe = "off" }}
[mcp]
listen = "127.0.0.1:{port}"
session_idle_seconds = {IDLE_SECONDS}
[mcp.tokens]
claude = "{TOKEN}"
"""


@contextmanager
def agent_process(env: dict[str, str], log: Path) -> Iterator[subprocess.Popen[bytes]]:
    """``edge-cli run``, its log in a file (a pipe nobody reads would stall it)."""
    with log.open("wb") as stderr:
        proc = subprocess.Popen([*EDGE_CLI, "run"], env=env, cwd=ROOT, stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=stderr)
        try:
            wait_for(lambda: proc.poll() is None and Path(env["EDGE_STATE_DIR"], "control.sock")
                     .exists(), 60, 0.05)
            yield proc
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(30)


def rss_kib(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmRSS:")))


class Abandoner:
    """Opens sessions and walks away from them; counts the answers."""

    def __init__(self, http: httpx.AsyncClient, url: str):
        self.http = http
        self.url = url
        self.opened: list[str] = []
        self.opened_at: list[float] = []
        self.full = 0

    async def open(self, sessions: int) -> None:
        async def one() -> None:
            answer = await self.http.post(self.url, json=INITIALIZE)
            if answer.status_code == 200:
                self.opened.append(answer.headers["mcp-session-id"])
                self.opened_at.append(time.monotonic())
            else:
                assert answer.status_code == 503 and "Too many open sessions" in answer.text
                self.full += 1

        for _ in range(sessions // 10):
            await asyncio.gather(*(one() for _ in range(10)))

    def most_at_once(self) -> int:
        """The most sessions opened within less than the idle time of one another: none of
        them can have idled out before the last of them opened, so all were open at once."""
        window = IDLE_SECONDS - 0.2
        return max(sum(1 for t in self.opened_at if start <= t < start + window)
                   for start in self.opened_at)

    async def alive(self, session: str) -> bool:
        answer = await self.http.post(self.url, json={"jsonrpc": "2.0", "id": 2, "method": "ping"},
                                      headers={"mcp-session-id": session,
                                               "mcp-protocol-version": "2025-06-18"})
        return answer.status_code != 404

    async def until_forgotten(self) -> None:
        """Until the newest session has idled out (the others went before it). Asking whether
        it is alive is a request to it too: ask no more often than it takes to idle out."""
        for _ in range(10):
            await asyncio.sleep(IDLE_SECONDS + 0.5)
            if not await self.alive(self.opened[-1]):
                return
        raise AssertionError("the sessions never idled out")


async def test_abandoned_sessions_are_capped_forgotten_and_their_memory_given_back(
        tmp_path, isolated_env):
    port = free_port()
    path = tmp_path / "config.toml"
    path.write_text(config(port))
    env = {**isolated_env, "EDGE_CONFIG": str(path)}
    with agent_process(env, tmp_path / "agent.log") as agent:
        await until_listening(port)
        async with httpx.AsyncClient(headers=HEADERS, timeout=30,
                                     limits=httpx.Limits(max_connections=10)) as http:
            abandoner = Abandoner(http, f"http://127.0.0.1:{port}/mcp")
            async with http_session(port, TOKEN) as session:  # a client's whole life, once
                assert not (await session.call_tool("pin_read", {"pin": "GPIO17"})).is_error
            await abandoner.open(CAP + 10)  # the code paths of a session, and of a full house
            await abandoner.until_forgotten()
            before = rss_kib(agent.pid)
            abandoner.opened.clear()
            abandoner.opened_at.clear()
            abandoner.full = 0
            started = time.monotonic()
            await abandoner.open(ABANDONED)
            took = time.monotonic() - started
            during = rss_kib(agent.pid)
            await abandoner.until_forgotten()
            await asyncio.sleep(IDLE_SECONDS)
            after = rss_kib(agent.pid)
            async with http_session(port, TOKEN) as session:
                assert not (await session.call_tool("pin_read", {"pin": "GPIO17"})).is_error
    print(f"\n{ABANDONED} abandoned sessions in {took:.1f} s: {len(abandoner.opened)} opened, "
          f"{abandoner.full} refused (503), at most {abandoner.most_at_once()} open at once; RSS "
          f"{before} KiB before, {during} KiB during, {after} KiB after (+{after - before} KiB)")
    assert len(abandoner.opened) + abandoner.full == ABANDONED
    assert abandoner.full > 0 and abandoner.most_at_once() == CAP
    assert after - before <= 2048
    log = (tmp_path / "agent.log").read_text()
    assert "Traceback" not in log
