"""The MCP HTTP server under a slowloris from a stranger on the LAN (its own address,
``127.0.0.3``): 1,200 connections that send a request head a line at a time and never finish it,
reopened as soon as they are closed, against an agent held to systemd's default limit of 1,024
descriptors. The stranger holds no more than its share of connections, each closed within the
head deadline; meanwhile the control socket (``edge-cli status``), an authenticated client (the
SDK's own) and a pump's 2 s auto-off (within 50 ms) work as ever, and the refusals are a few
summary lines, not a line or a traceback each."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import resource
import sys
import time
from collections.abc import Iterator

from tests.helpers import ROOT, cli, until
from tests.mcp.http_agent import free_port, http_session, until_listening

TOKEN = "claude-secret-0123456789"
SYSTEMD_NOFILE = 1024
"""systemd's default soft limit on a service's open files (``LimitNOFILE=1024:524288``)."""
HEAD_SECONDS = 2.0
ATTACK_SECONDS = 10.0
SUMMARY_SECONDS = 2.0


def config(port: int) -> str:
    return f"""
[channels.cli]
enabled = false
[security]
autonomy = "full"
[boards.gpio.aliases]
pump = "GPIO27"
[boards.gpio.pins]
pump = {{ mode = "output", safe = "off", max_on_seconds = 2 }}
[mcp]
listen = "127.0.0.1:{port}"
header_timeout_seconds = {HEAD_SECONDS}
[mcp.tokens]
claude = "{TOKEN}"
"""


@contextlib.contextmanager
def descriptor_limit(limit: int) -> Iterator[None]:
    """This process (the agent's, here) may open at most ``limit`` descriptors meanwhile."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


async def test_a_slowloris_holds_only_its_share_and_the_agent_works_on(
        start_agent, mock_factory, isolated_env, write_config, caplog, monkeypatch):
    monkeypatch.setattr("edge.mcp.server_connections.REFUSAL_LOG_SECONDS", SUMMARY_SECONDS)
    caplog.set_level(logging.INFO)
    port = free_port()
    env = {**isolated_env, "EDGE_CONFIG": str(write_config(config(port)))}
    with descriptor_limit(SYSTEMD_NOFILE):
        agent = await start_agent(config(port))
        await until_listening(port)
        before = open_descriptors()
        attacker = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "tests.mcp.slowloris", "127.0.0.1", str(port),
            "--source", "127.0.0.3", "--connections", "1200", "--seconds", str(ATTACK_SECONDS),
            cwd=ROOT, stdout=asyncio.subprocess.PIPE)
        most = before

        async def count_descriptors() -> None:
            nonlocal most
            while True:
                most = max(most, open_descriptors())
                await asyncio.sleep(0.02)

        counting = asyncio.create_task(count_descriptors())
        await asyncio.sleep(2)  # the attack in full swing
        started = time.monotonic()
        status = await asyncio.to_thread(cli, "status", "--json", env=env)
        status_seconds = time.monotonic() - started
        assert status.returncode == 0, status.stderr
        assert json.loads(status.stdout)["data"]["daemon"]["running"] is True
        started = time.monotonic()
        async with http_session(port, TOKEN) as session:
            tools = {t.name for t in (await session.list_tools()).tools}
            read = await session.call_tool("pin_read", {"pin": "pump"})
        client_seconds = time.monotonic() - started
        assert "pin_read" in tools and not read.is_error
        switched = await asyncio.to_thread(cli, "gpio", "write", "pump", "on", env=env)
        assert switched.returncode == 0, switched.stderr
        pump = mock_factory.pin(27)
        await until(lambda: pump.state == 0 and len(pump.states) >= 3, timeout=5)
        on, off = pump.states[-2:]
        assert (on.state, off.state) == (True, False)
        assert abs(off.timestamp - 2.0) <= 0.05, f"auto-off after {off.timestamp:.3f} s"
        out, _ = await attacker.communicate()
        counting.cancel()
    seen = json.loads(out)
    server = agent.runtime.mcp_http
    assert server is not None
    guard, refused = server.connections, server.refusals.totals
    print(f"\nslowloris: {seen}; the agent held at most {guard.most_open} connections "
          f"({guard.most_per_peer} from one address), {most - before} more descriptors than "
          f"before ({before}); refused {dict(refused)}; edge-cli status {status_seconds:.2f} s; "
          f"MCP client (initialize, list, read) {client_seconds:.2f} s; auto-off after "
          f"{off.timestamp:.3f} s")
    assert seen["opened"] >= 1200 and seen["closed_by_server"] >= 1200
    assert guard.most_per_peer == 16  # max_connections_per_peer: the stranger's share
    assert guard.most_open <= 16 + 4  # and the client's
    assert refused["displaced"] + refused["head_timeout"] >= 1200
    assert most - before < 200  # never 1,200 (asyncio takes in up to 64 before the guard sees them)
    summaries = [r.getMessage() for r in caplog.records if "mcp_http_refused" in r.getMessage()]
    assert 1 <= len(summaries) <= ATTACK_SECONDS / SUMMARY_SECONDS + 2
    counted = sum(int(re.search(r"count=(\d+)", line)[1]) for line in summaries)
    assert counted >= 1200
    assert all("127.0.0.3" in line for line in summaries)
    assert not [r for r in caplog.records if r.exc_info], "no tracebacks"
