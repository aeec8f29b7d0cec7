"""The recipe of ``edge/ops/README.md``, followed: a test-only operation (``plant.moisture``,
tests/ops_catalog/moisture.py, one module) registered in the catalog is, with no other file
touched, a model tool with its schema, an operation of the control socket (a real socket), an MCP
tool (the SDK's own client over the agent's HTTP server), an operation a fleet node answers (a
real broker) and a chat command listed in ``/help``; all of them read the pin through the one
door. Taken out again, no door offers it."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from edge.agent.commands import CommandContext, run_command
from edge.control.client import request
from edge.core.requester import Requester
from edge.ops.catalog import register, unregister
from edge.ops.operation import Operation
from edge.tools.base import schema_of, spec_of
from tests.fleet.wire import RawAsker
from tests.mcp.http_agent import free_port, http_session, until_listening
from tests.ops_catalog.moisture import MOISTURE, MoistureArgs

SOIL = """
[boards.gpio]
type = "gpio"
[boards.gpio.aliases]
basil = "GPIO5"
[boards.gpio.pins]
basil = {{mode = "input", pull = "down"}}
[mcp]
listen = "127.0.0.1:{port}"
"""


async def no_status(full: bool = True) -> str:
    return "status"


@pytest.fixture
def moisture() -> Iterator[Operation]:
    register(MOISTURE)
    yield MOISTURE
    unregister(MOISTURE.name)


async def test_a_registered_operation_is_offered_by_every_door(
        moisture: Operation, fleet_agent: Any, broker: Any, mock_factory: Any) -> None:
    port = free_port()
    node = await fleet_agent("a", SOIL.format(port=port), broker.url)
    mock_factory.pin(5).drive_high()  # the sensor's output: wet
    runtime = node.runtime

    tool = runtime.tools["plant_moisture"]
    assert spec_of(tool).parameters == schema_of(MoistureArgs)
    assert spec_of(tool).parameters["properties"]["threshold"]["maximum"] == 1.0
    by_model = await tool.execute({"plant": "basil"}, Requester("cli", "tester"))
    assert by_model.success and by_model.output == "gpio:GPIO5 (basil) is wet"

    socket = await asyncio.to_thread(request, [runtime.loaded.control_socket], "plant.moisture",
                                     {"plant": "basil", "threshold": 0.9}, 10.0)
    assert socket["ok"] and socket["data"]["dry"] is False
    refused = await asyncio.to_thread(request, [runtime.loaded.control_socket], "plant.moisture",
                                      {"plant": "basil", "threshold": 2}, 10.0)
    assert not refused["ok"] and "threshold" in refused["error"]  # the model's bound holds

    await until_listening(port)
    async with http_session(port, None) as session:
        offered = {t.name: t for t in (await session.list_tools()).tools}
        assert offered["plant_moisture"].description == moisture.description
        assert offered["plant_moisture"].annotations.read_only_hint is True
        assert offered["plant_moisture"].input_schema["required"] == ["plant"]
        by_mcp = await session.call_tool("plant_moisture", {"plant": "basil"})
    assert not by_mcp.is_error and by_mcp.structured_content["value"] == 1.0

    mock_factory.pin(5).drive_low()  # it dried out
    async with RawAsker(broker.url) as asker:
        by_fleet = await asker.ask("edge-agent/a", "plant.moisture", {"plant": "basil"})
    assert by_fleet["ok"] and by_fleet["data"]["dry"] is True

    chat = CommandContext(tools=runtime.tools, status_text=no_status,
                          requester=Requester("telegram", "42"))
    assert "  /moisture PLANT      whether a plant's soil is wet or dry" in (
        await run_command("/help", chat) or "")
    assert await run_command("/moisture basil", chat) == "gpio:GPIO5 (basil) is dry"
    assert await run_command("/moisture", chat) == "Usage: /moisture PLANT"


async def test_taken_out_no_door_offers_it(moisture: Operation) -> None:
    from edge.fleet.protocol import refusal
    from edge.mcp.server import McpCaller, catalog_server

    unregister(moisture.name)
    assert refusal("plant.moisture") is not None
    server = catalog_server(lambda *args: None, lambda ctx: McpCaller("mcp:x"))  # type: ignore[arg-type]
    assert "plant_moisture" not in {t.name for t in await server.list_tools()}
    register(moisture)
    assert refusal("plant.moisture") is None
