"""``edge-cli mcp``, driven by the MCP SDK's own stdio client against a real agent (in the test's
loop, on gpiozero's mock pins): the tools with their annotations and the resources; an
allowlisted pin switched and read back through ``edge-cli gpio read --json``; refusals outside the
allowlist, by an interlock and by the rate limit, each a tool error saying why; every call in
``edge-cli history --json`` as ``mcp:<client>``; no agent running is exit 1; the handshake is
answered before the catalog's tools are loaded."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from mcp import types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

from tests.helpers import EDGE_CLI, ROOT, cli

CONFIG = """
[channels.cli]
enabled = false
[security]
autonomy = "full"
[boards.gpio.aliases]
led = "GPIO17"
heater = "GPIO22"
pump = "GPIO27"
[boards.gpio.pins]
led = { mode = "output", safe = "off" }
heater = { mode = "output", safe = "off" }
pump = { mode = "output", safe = "off", max_switches_per_minute = 2 }

[[interlocks]]
name = "one-at-a-time"
exclusive = ["led", "heater"]
"""


@asynccontextmanager
async def mcp_session(env: dict[str, str], client: str = "Test Client") -> AsyncIterator[ClientSession]:
    """An MCP session with ``edge-cli mcp`` run as a client would run it, as ``client``."""
    params = StdioServerParameters(command=EDGE_CLI[0], args=[*EDGE_CLI[1:], "mcp"], env=env,
                                   cwd=ROOT)
    info = types.Implementation(name=client, version="1")
    async with (stdio_client(params) as (read, write),
                ClientSession(read, write, client_info=info) as session):
        await session.initialize()
        yield session


def text(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


async def edge_cli(*args: str, env: dict[str, str]) -> dict:
    """``edge-cli ARGS --json`` in a thread (the agent runs in this loop), its JSON."""
    done = await asyncio.to_thread(cli, *args, "--json", env=env)
    return json.loads(done.stdout)


async def test_tools_carry_annotations_and_pins_are_resources(start_agent, write_config,
                                                              isolated_env):
    await start_agent(CONFIG)
    env = {**isolated_env, "EDGE_CONFIG": str(write_config(CONFIG))}
    async with mcp_session(env) as session:
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert {"pin_read", "pins_list", "pin_write", "pin_pwm", "servo_angle", "sensors_list",
                "sensor_read", "status", "history", "schedules_list", "schedule_add",
                "schedule_remove"} <= set(tools)
        assert tools["pin_read"].annotations.read_only_hint is True
        assert tools["pin_write"].annotations.read_only_hint is False
        assert tools["pin_write"].annotations.destructive_hint is True
        assert tools["history"].annotations.read_only_hint is True
        resources = {str(r.uri) for r in (await session.list_resources()).resources}
        assert {"edge://pins", "edge://sensors"} <= resources
        templates = {t.uri_template for t in (await session.list_resource_templates()).resource_templates}
        assert {"edge://pins/{name}", "edge://sensors/{name}"} <= templates
        pins = json.loads((await session.read_resource("edge://pins")).contents[0].text)
        assert {p["aliases"][0] for p in pins["pins"]} == {"led", "heater", "pump"}
        led = json.loads((await session.read_resource("edge://pins/led")).contents[0].text)
        assert led["pin"] == "GPIO17" and led["value"] == 0
        with pytest.raises(MCPError, match="GPIO5"):  # the door's refusal, in its words
            await session.read_resource("edge://pins/GPIO5")


async def test_switches_an_allowlisted_pin_and_the_audit_names_the_client(
        start_agent, write_config, isolated_env, mock_factory):
    await start_agent(CONFIG)
    env = {**isolated_env, "EDGE_CONFIG": str(write_config(CONFIG))}
    async with mcp_session(env, client="Claude Desktop") as session:
        done = await session.call_tool("pin_write", {"pin": "led", "value": "on"})
        assert not done.is_error, text(done)
        assert done.structured_content["value"] == 1.0  # what the pin read back
        assert mock_factory.pin(17).state == 1
        read = await edge_cli("gpio", "read", "led", env=env)
        assert read["data"]["value"] == 1.0
        outside = await session.call_tool("pin_write", {"pin": "GPIO5", "value": "on"})
        assert outside.is_error and "GPIO5" in text(outside) and "allowlist" in text(outside)
        interlocked = await session.call_tool("pin_write", {"pin": "heater", "value": "on"})
        assert interlocked.is_error
        assert "refused by interlock one-at-a-time (led is on)" in text(interlocked)
        assert mock_factory.pin(22).state == 0
        for value in ("on", "off"):
            assert not (await session.call_tool("pin_write", {"pin": "pump", "value": value})).is_error
        limited = await session.call_tool("pin_write", {"pin": "pump", "value": "on"})
        assert limited.is_error
        assert "switched 2 times in the last minute (max_switches_per_minute = 2)" in text(limited)
        assert mock_factory.pin(27).state == 0
    history = await edge_cli("history", env=env)
    records = history["data"]["records"]
    by_mcp = [r for r in records if r["caller"] == "mcp:claude-desktop"]
    assert {(r["label"], r["outcome"]) for r in by_mcp} >= {("led", "ok"), ("heater", "refused"),
                                                            ("pump", "ok")}
    assert any(r["outcome"] == "refused" and r["label"] == "pump" for r in by_mcp)
    assert all(r["door"] == "mcp" and r["why"].startswith("local:") for r in by_mcp)


def test_no_agent_running_is_exit_1_before_any_mcp(write_config, isolated_env, mock_factory):
    env = {**isolated_env, "EDGE_CONFIG": str(write_config(CONFIG))}
    done = cli("mcp", env=env, stdin="")
    assert done.returncode == 1
    assert done.stdout == ""
    assert "no agent is running" in done.stderr


MORE = CONFIG + """
[boards.gpio.pins.GPIO18]
mode = "pwm"
safe = "off"

[[schedules]]
name = "morning"
cron = "0 6 * * *"
action = "gpio write led on"
"""


async def test_pwm_sensors_and_schedules_through_the_policy(start_agent, write_config,
                                                           isolated_env, mock_factory):
    await start_agent(MORE)
    env = {**isolated_env, "EDGE_CONFIG": str(write_config(MORE))}
    async with mcp_session(env) as session:
        duty = await session.call_tool("pin_pwm", {"pin": "GPIO18", "duty": 0.25})
        assert not duty.is_error and duty.structured_content["value"] == 0.25
        assert mock_factory.pin(18).state == 0.25
        servo = await session.call_tool("servo_angle", {"pin": "GPIO18", "angle": 90})
        assert servo.is_error and "GPIO18 is not declared as a servo" in text(servo)  # the board's words
        assert mock_factory.pin(18).state == 0.25
        assert not (await session.call_tool("sensors_list", {})).is_error
        unknown = await session.call_tool("sensor_read", {"name": "nope"})
        assert unknown.is_error and "no sensor 'nope'" in text(unknown)
        listed = await session.call_tool("schedules_list", {})
        assert [s["name"] for s in listed.structured_content["schedules"]] == ["morning"]
        added = await session.call_tool("schedule_add", {"name": "x", "every": "1h",
                                                         "action": "gpio write led on"})
        removed = await session.call_tool("schedule_remove", {"name": "morning"})
        for refused in (added, removed):  # the schedule tools' own check: admins only
            assert refused.is_error and "only an admin" in text(refused)
            assert "mcp:test-client is not one" in text(refused)
        listed = await session.call_tool("schedules_list", {})
        assert [s["name"] for s in listed.structured_content["schedules"]] == ["morning"]
        status = await session.call_tool("status", {})
        assert not status.is_error and status.structured_content["daemon"]["running"] is True
        assert "gpio" in text(status)


async def test_initialize_is_answered_before_the_catalog_and_its_tools_come_with_the_next_request():
    """What ``edge-cli mcp`` builds (:func:`edge.mcp.server_stdio.serve`), in-process: the answer
    to ``initialize`` does not wait for the catalog's tools; the first request after it registers
    them, once."""
    from mcp import Client

    from edge.control.ops import OpResult
    from edge.mcp.server import McpCaller, StdioCaller, add_tools, catalog_server
    from edge.mcp.server_stdio import ToolsOnFirstUse

    async def door(op: str, args: dict, caller: McpCaller) -> OpResult:
        return OpResult(True, "done", {"op": op, "caller": caller.name})

    caller, registered = StdioCaller(), []

    def register() -> None:
        registered.append("tools")
        add_tools(server, door, caller)

    tools = ToolsOnFirstUse(register)
    server = catalog_server(door, caller, [caller.middleware, tools.middleware], tools=False)
    async with Client(server) as client:  # its handshake: server/discover (2026-07-28)
        assert registered == [] and await server.list_tools() == []  # answered without them
        listed = {tool.name for tool in (await client.list_tools()).tools}
        assert registered == ["tools"] and {"pin_write", "servo_angle", "pins_list"} <= listed
        result = await client.call_tool("pin_write", {"pin": "led", "value": "on"})
        assert result.structured_content["op"] == "gpio.write"
        assert registered == ["tools"]
