"""What a server may send, bounded: the bulky server (tests/mcp/servers/bulky.py) over stdio
in its sandbox and over streamable HTTP. Results cut for the model, messages over the wire
ceiling refused (the session stays), tools over the schema caps and past max_tools left out
with warnings, the server's stderr as quoted log fields, and a server on the current SDK (its
ping answered "Method not found") kept through many pings."""

from __future__ import annotations

import logging
import subprocess
import sys
from collections.abc import AsyncIterator
from typing import Any

import pytest

from edge.config.mcp import McpServerConfig
from edge.core.requester import Requester
from edge.mcp.client_servers import McpServers
from edge.mcp.remote_tools import RemoteTool
from edge.security.approvals import ApprovalGate
from tests.fakes.mosquitto import free_port
from tests.helpers import ROOT, until, wait_for
from tests.mcp.test_client_tools import Records, _answers

ASKER = Requester("telegram", "42", via_model=True, why="turn 1")
ALLOW = ["result", "say", "wide", "medium_a", "medium_b", "medium_c", "medium_d", "medium_e"]


def bulky(**overrides: Any) -> McpServerConfig:
    fields: dict[str, Any] = {
        "name": "bulky", "command": sys.executable, "args": ["-m", "tests.mcp.servers.bulky"],
        "env": {"PYTHONPATH": str(ROOT)}, "paths": [str(ROOT)], "allow": ALLOW,
        "actuates": [], "timeout_seconds": 20}
    return McpServerConfig(**{**fields, **overrides})


async def running(config: McpServerConfig, **options: Any) -> McpServers:
    servers = McpServers([config], ApprovalGate(autonomy="full"), 1000, Records().record,
                         **options)
    await servers.start()
    return servers


@pytest.fixture
async def stdio() -> AsyncIterator[McpServers]:
    servers = await running(bulky())
    yield servers
    await servers.aclose()


def tool(servers: McpServers, name: str) -> RemoteTool:
    return next(t for t in servers.tools if t.tool == name)


async def test_a_result_over_max_result_bytes_is_cut_and_says_so(stdio: McpServers) -> None:
    result = await tool(stdio, "result").execute({"size": 300_000}, ASKER)
    assert result.success
    assert result.output == "x" * 262144 + f"\n[cut: {300_000 - 262144} more bytes]"
    assert result.data is None


async def test_a_50_mb_result_is_refused_unread_and_the_session_goes_on(stdio: McpServers) -> None:
    big = await tool(stdio, "result").execute({"size": 50_000_000}, ASKER)
    assert not big.success
    assert "over the 1048576 this agent takes from it (max_message_bytes): refused" in (
        big.error or "")
    assert stdio.links[0].connected and stdio.links[0].task.restarts == 0
    small = await tool(stdio, "result").execute({"size": 3}, ASKER)
    assert small.output == "xxx"


async def test_tools_over_the_schema_caps_and_max_tools_are_left_out_with_warnings(
        stdio: McpServers) -> None:
    link = stdio.links[0]
    assert set(link.left_out) == {"wide", "medium_e"}
    assert link.left_out["wide"].startswith("its input schema is 215")
    assert "max_schema_total_bytes 65536" in link.left_out["medium_e"]
    row = stdio.status()["servers"][0]
    assert row["warnings"][0] == "it lists more than 64 tools (max_tools): the rest were not read"
    assert len(link.tools) + len(link.left_out) == 64 and row["missing"] == []
    wide = tool(stdio, "wide")
    assert wide.parameters_schema() == {"type": "object", "properties": {}}
    assert "left out by the agent" in wide.description
    refused = await wide.execute({}, ASKER)
    assert refused.error is not None and refused.error.startswith("bulky.wide is left out: its "
                                                                  "input schema is")
    assert tool(stdio, "medium_d").parameters_schema()["properties"]  # within the caps


async def test_stderr_reaches_the_log_quoted_cut_and_rate_bounded(
        stdio: McpServers, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="edge.mcp.client_stdio")
    forged = "INFO edge.hardware actuation board=gpio pin=GPIO17 value=on\n\x1b[2J\r"
    await tool(stdio, "say").execute({"text": forged + "y" * 900 + "\n"}, ASKER)
    lines = await until(lambda: [r.getMessage() for r in caplog.records
                                 if r.getMessage().startswith("mcp_server_output")][-2:])
    assert lines[0] == ('mcp_server_output server=bulky line="INFO edge.hardware actuation '
                        'board=gpio pin=GPIO17 value=on"')
    assert lines[1] == f'mcp_server_output server=bulky line="\\u001b[2J\\r{"y" * 495}" cut=405'
    assert all("\n" not in r.getMessage() for r in caplog.records)
    caplog.clear()
    await tool(stdio, "say").execute({"text": "flood\n", "times": 5000}, ASKER)
    dropped = await until(lambda: [r.getMessage() for r in caplog.records
                                   if "dropped=" in r.getMessage()], timeout=5)
    flood = [r for r in caplog.records if r.getMessage().endswith('line="flood"')]
    assert len(flood) <= 20 and dropped[0].startswith("mcp_server_output server=bulky dropped=")


async def test_a_server_answering_ping_with_method_not_found_stays_up_through_200_pings() -> None:
    """The lights server on SDK 2.3.0 (the 2026 protocol has no ping), pinged every 20 ms:
    as many pings as 100 minutes at the agent's 30 s, and no restart."""
    lights = McpServerConfig(name="lights", command=sys.executable,
                             args=["-m", "tests.mcp.servers.lights"],
                             env={"PYTHONPATH": str(ROOT)}, paths=[str(ROOT)],
                             allow=["light_level"], timeout_seconds=5)
    servers = await running(lights, ping_seconds=0.02)
    try:
        link = servers.links[0]
        pings = 0
        original = link._ping

        async def counted(client: Any) -> None:
            nonlocal pings
            await original(client)
            pings += 1
        link._ping = counted  # type: ignore[method-assign]
        await until(lambda: pings >= 200, timeout=60)
        assert link.connected and link.task.restarts == 0 and link.last_error is None
    finally:
        await servers.aclose()


@pytest.mark.parametrize("answers", ["json", "events"])
async def test_over_http_a_big_answer_is_refused_and_a_long_one_cut(answers: str) -> None:
    port = free_port()
    flags = ["--json"] if answers == "json" else []
    proc = subprocess.Popen([sys.executable, "-m", "tests.mcp.servers.bulky", "--http",
                             str(port), *flags], cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: _answers(port), timeout=20, interval=0.05)
        config = McpServerConfig(name="bulky", url=f"http://127.0.0.1:{port}/mcp",
                                 allow=["result"], timeout_seconds=20)
        servers = await running(config)
        try:
            result = tool(servers, "result")
            big = await result.execute({"size": 20_000_000}, ASKER)
            assert not big.success and "(max_message_bytes): refused" in (big.error or ""), big
            long = await result.execute({"size": 300_000}, ASKER)
            assert (long.output or "").endswith(f"\n[cut: {300_000 - 262144} more bytes]")
            assert servers.links[0].connected and servers.links[0].task.restarts == 0
        finally:
            await servers.aclose()
    finally:
        proc.kill()
        proc.wait()
