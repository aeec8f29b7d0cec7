"""The control socket as a server facing hostile local clients: idle connections time out, the
number of connections is capped, over-long and deeply nested requests get an answer, a flood of
idle connections leaves ``status`` answering, and switching the model is the operator's."""

from __future__ import annotations

import asyncio
import json
import os
import pwd
import socket
import time

import pytest

from edge.control.ops import run_op
from edge.control.server import REQUEST_LIMIT, ControlServer, is_local_operator
from edge.core.requester import Requester


class Target:
    """What the server acts on: a status that can be held open, no tools, no provider."""

    def __init__(self):
        self.tools: dict = {}
        self.provider = None
        self.release = asyncio.Event()
        self.release.set()

    async def status(self):
        await self.release.wait()
        return {"daemon": {"running": True}}


@pytest.fixture
async def served(tmp_path):
    async def start(**limits) -> tuple[ControlServer, Target]:
        target = Target()
        server = ControlServer(tmp_path / "control.sock", target, **limits)
        await server.start()
        started.append(server)
        return server, target

    started: list[ControlServer] = []
    yield start
    for server in started:
        await server.close()


async def ask(path, payload: bytes, timeout: float = 2.0) -> dict:
    reader, writer = await asyncio.open_unix_connection(str(path))
    try:
        writer.write(payload)
        await writer.drain()
        return json.loads(await asyncio.wait_for(reader.readline(), timeout))
    finally:
        writer.close()


async def test_an_idle_connection_is_told_and_closed(served):
    server, _ = await served(idle_timeout=0.2)
    reader, writer = await asyncio.open_unix_connection(str(server.path))
    writer.write(b'{"op": "sta')  # never finishes the line
    reply = json.loads(await asyncio.wait_for(reader.readline(), 2))
    assert reply["ok"] is False and "no complete request within 0.2 s" in reply["error"]
    assert await asyncio.wait_for(reader.read(), 2) == b""  # closed
    writer.close()
    assert server.connections == 0


async def test_an_over_long_request_gets_an_error_not_silence(served):
    server, _ = await served()
    reply = await ask(server.path, b'{"op": "status", "args": {"x": "' + b"a" * REQUEST_LIMIT
                      + b'"}}\n')
    assert reply["exit_code"] == 2 and f"longer than {REQUEST_LIMIT} bytes" in reply["error"]


@pytest.mark.parametrize("payload", [b"[" * 50_000, b'{"op": "status", "args": ' + b'{"a": ' * 40
                                     + b"1" + b"}" * 41])
async def test_deeply_nested_json_is_answered_with_a_clear_error(served, payload):
    server, _ = await served()
    reply = await ask(server.path, payload + b"\n")
    assert reply["ok"] is False and reply["exit_code"] == 2
    assert "nested deeper than 16 levels" in reply["error"]
    assert (await ask(server.path, b'{"op": "status"}\n'))["ok"]  # and the server still serves


async def test_nesting_inside_strings_does_not_count(served):
    server, _ = await served()
    reply = await ask(server.path, json.dumps({"op": "gpio.read", "args": {"pin": "[" * 100}})
                      .encode() + b"\n")
    assert "nested" not in reply.get("error", "")


async def test_at_the_limit_the_longest_idle_connection_makes_room(served):
    server, _ = await served(max_connections=3)
    idle = [await asyncio.open_unix_connection(str(server.path)) for _ in range(3)]
    await asyncio.sleep(0.05)
    assert server.connections == 3
    assert (await ask(server.path, b'{"op": "status"}\n'))["ok"]
    assert await asyncio.wait_for(idle[0][0].read(), 2) == b""  # the oldest was closed
    assert server.connections <= 3
    for _, writer in idle:
        writer.close()


async def test_when_every_connection_is_busy_a_newcomer_is_refused_at_once(served):
    server, target = await served(max_connections=2)
    target.release.clear()  # status now blocks: both connections stay busy
    busy = [asyncio.create_task(ask(server.path, b'{"op": "status"}\n', timeout=5))
            for _ in range(2)]
    await asyncio.sleep(0.1)
    started = time.monotonic()
    reply = await ask(server.path, b'{"op": "status"}\n')
    assert time.monotonic() - started < 1
    assert reply["ok"] is False and "busy (2 control connections open)" in reply["error"]
    target.release.set()
    assert all(r["ok"] for r in await asyncio.gather(*busy))


def _flood(path: str, count: int) -> list[socket.socket]:
    """``count`` connections that never send anything (waiting while the backlog is full)."""
    opened: list[socket.socket] = []
    deadline = time.monotonic() + 30
    while len(opened) < count:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.setblocking(False)
        try:
            sock.connect(path)
        except BlockingIOError:  # the backlog is full until the server accepts
            sock.close()
            assert time.monotonic() < deadline, f"only {len(opened)} connections in 30 s"
            time.sleep(0.001)
            continue
        opened.append(sock)
    return opened


async def test_a_flood_of_idle_connections_leaves_status_answering(served):
    """About 1,100 idle connections exhausted the daemon's descriptors before the limit."""
    server, _ = await served()  # the real limits: 64 connections, 10 s idle timeout
    flood = await asyncio.to_thread(_flood, str(server.path), 1100)
    try:
        await asyncio.sleep(0.2)
        assert server.connections <= 64
        started = time.monotonic()
        reply = await ask(server.path, b'{"op": "status"}\n')
        assert reply["ok"] and reply["data"]["daemon"]["running"]
        assert time.monotonic() - started < 1.0
        assert len(os.listdir("/proc/self/fd")) < len(flood) + 200  # the server kept ~64, not 1,100
    finally:
        for sock in flood:
            sock.close()


async def test_switching_the_model_is_for_the_local_operator_only():
    target = Target()
    for requester in (Requester("telegram", "42"), Requester("local", "unknown")):
        result = await run_op(target, "models.select", {"name": "big"}, requester)
        assert not result.ok and "local operator only" in result.message
    # the operator gets through to the switch (here: there is none)
    result = await run_op(target, "models.select", {"name": "big"}, Requester("local", "pi"),
                          operator=True)
    assert "no provider is running" in result.message


def test_the_local_operator_is_root_the_agents_user_or_the_sockets_group():
    me = os.getuid()
    assert is_local_operator(0, None)
    assert is_local_operator(me, None)
    try:
        nobody = pwd.getpwnam("nobody")
    except KeyError:
        pytest.skip("no user nobody")
    assert not is_local_operator(nobody.pw_uid, None, agent_uid=me)
    assert not is_local_operator(nobody.pw_uid, 4242, agent_uid=me)  # not in that group
    assert is_local_operator(nobody.pw_uid, nobody.pw_gid, agent_uid=me)  # its own group
