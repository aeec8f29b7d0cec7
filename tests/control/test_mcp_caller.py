"""``"as": "mcp:<client>"`` on the control socket (what ``edge-cli mcp`` sends): the MCP client is
the caller, as a model asking, and the peer's local user stays the audit trail's "why"; what
verified it (an admin's *Always* is remembered for that) is the peer's uid, from the kernel, with
the client's name; a peer cannot name anyone else (a chat user, the terminal), and the operator's
operations other than schedules are not an MCP client's."""

from __future__ import annotations

import asyncio
import getpass
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from edge.control.server import ControlServer
from edge.core.requester import Requester
from edge.tools.base import ToolResult


class RecordingTool:
    """A tool that says who asked it."""

    name = "gpio_read"
    description = "records its requester"

    def __init__(self) -> None:
        self.asked: list[Requester] = []

    def parameters_schema(self) -> dict:
        return {}

    async def execute(self, args: dict, requester: Requester) -> ToolResult:
        self.asked.append(requester)
        return ToolResult(True, f"read by {requester.caller}", data={"value": 1.0})


class Target:
    def __init__(self) -> None:
        self.tool = RecordingTool()
        self.tools = {"gpio_read": self.tool}
        self.provider = None

    async def status(self) -> dict:
        return {"daemon": {"running": True}}


@pytest.fixture
async def served(tmp_path):
    target = Target()
    server = ControlServer(tmp_path / "control.sock", target)
    await server.start()
    yield server, target
    await server.close()


async def ask(server: ControlServer, request: dict) -> dict:
    reader, writer = await asyncio.open_unix_connection(str(server.path))
    try:
        writer.write(json.dumps(request).encode() + b"\n")
        await writer.drain()
        return json.loads(await asyncio.wait_for(reader.readline(), 5))
    finally:
        writer.close()


async def test_the_mcp_client_is_the_caller_and_the_local_user_the_why(served):
    server, target = served
    answer = await ask(server, {"op": "gpio.read", "args": {"pin": "led"}, "as": "mcp:claude"})
    assert answer["ok"] and answer["message"] == "read by mcp:claude"
    [asked] = target.tool.asked
    assert (asked.channel, asked.sender, asked.via_model) == ("mcp", "claude", True)
    assert asked.why == f"local:{getpass.getuser()}"
    assert asked.verified_as == f"uid:{os.getuid()} mcp:claude"


ASK_AS_CLAUDE = """
import json, socket, sys
sock = socket.socket(socket.AF_UNIX)
sock.connect(sys.argv[1])
sock.sendall(json.dumps({"op": "gpio.read", "args": {}, "as": "mcp:claude"}).encode() + b"\\n")
print(sock.makefile().readline())
"""


@pytest.mark.skipif(os.getuid() != 0 or not Path("/usr/bin/python3").exists(),
                    reason="asking as another local user needs root")
async def test_another_local_user_naming_the_same_client_is_another_identity():
    folder = Path(tempfile.mkdtemp())
    try:
        folder.chmod(0o755)
        target = Target()
        server = ControlServer(folder / "control.sock", target)
        await server.start()
        server.path.chmod(0o666)  # nobody, who is not in the socket's group, may connect
        try:
            done = await asyncio.to_thread(
                subprocess.run, ["/usr/bin/python3", "-c", ASK_AS_CLAUDE, str(server.path)],
                user=65534, group=65534, capture_output=True, text=True, timeout=30)
            assert json.loads(done.stdout)["ok"], done.stderr
            await ask(server, {"op": "gpio.read", "args": {}, "as": "mcp:claude"})
        finally:
            await server.close()
    finally:
        shutil.rmtree(folder)
    nobody, root = target.tool.asked
    assert nobody.caller == root.caller == "mcp:claude"
    assert (nobody.verified_as, root.verified_as) == ("uid:65534 mcp:claude", "uid:0 mcp:claude")


@pytest.mark.parametrize("caller", ["telegram:42", "cli:root", "mcp:", "mcp:42", "mcp:a b",
                                    "local:pi"])
async def test_a_peer_cannot_name_anyone_but_an_mcp_client(served, caller):
    server, target = served
    answer = await ask(server, {"op": "gpio.read", "args": {"pin": "led"}, "as": caller})
    assert not answer["ok"] and answer["exit_code"] == 2
    assert "\"as\" must be mcp:<client>" in answer["error"]
    assert target.tool.asked == []


async def test_operator_operations_are_not_an_mcp_clients(served):
    server, _ = served
    answer = await ask(server, {"op": "models.select", "args": {"name": "x"}, "as": "mcp:claude"})
    assert not answer["ok"]
    assert "models.select is for the local operator only; mcp:claude" in answer["error"]
