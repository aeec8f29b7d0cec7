"""``sensor_history`` over ``edge-cli mcp``, driven by the MCP SDK's stdio client against a real
agent holding a week of greenhouse readings (tests/charts/greenhouse.py): a read-only tool whose
answer is the agent's own (the same as ``edge-cli sensors history --json``), with the failing
hours as a gap, and the agent's words for an unknown sensor or a span it cannot read."""

from __future__ import annotations

import time
from datetime import datetime
from pathlib import Path

from tests.charts.greenhouse import FAILING, RULES, write_week
from tests.mcp.test_server_stdio import edge_cli, mcp_session, text

CONFIG = "[channels.cli]\nenabled = false\n" + RULES


def local_minute(at: float) -> str:
    return datetime.fromtimestamp(at).strftime("%Y-%m-%dT%H:%M")


async def test_a_sensors_history_is_a_read_only_tool(start_agent, write_config, isolated_env):
    week = await write_week(Path(isolated_env["EDGE_STATE_DIR"]), time.time())
    await start_agent(CONFIG)
    env = {**isolated_env, "EDGE_CONFIG": str(write_config(CONFIG))}
    until = week.now - 3600  # a fixed day, so that both answers below cover the same minutes
    span = {"since": local_minute(until - 86400), "until": local_minute(until)}
    async with mcp_session(env) as session:
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert tools["sensor_history"].annotations.read_only_hint is True
        assert tools["sensor_history"].annotations.open_world_hint is False
        day = await session.call_tool("sensor_history", {"name": "greenhouse",
                                                         "quantity": "temperature",
                                                         "points": 48, **span})
        assert not day.is_error, text(day)
        [series] = day.structured_content["series"]
        assert series["sensor"] == "greenhouse" and series["unit"] == "°C"
        assert 0 < len(series["buckets"]) <= 48
        summary = series["summary"]
        assert 11 < summary["low"] < 13 and 27 < summary["high"] < 29
        assert summary["gaps"] >= 1  # the two failing hours, inside the day asked
        assert any(b["mean"] is None and week.now - FAILING[0] - 1800 <= b["start"]
                   <= week.now - FAILING[1] for b in series["buckets"])
        assert text(day).startswith("greenhouse temperature (°C)")

        every_quantity = await session.call_tool("sensor_history", {"name": "greenhouse"})
        counts = {s["quantity"]: s["summary"]["count"]
                  for s in every_quantity.structured_content["series"]}
        assert sorted(counts) == ["humidity", "pressure", "temperature"]  # a BME280's (failing)
        assert counts["temperature"] > 1000  # the last day, a reading a minute
        unknown = await session.call_tool("sensor_history", {"name": "shed"})
        assert unknown.is_error and text(unknown) == "no sensor 'shed' (sensors: greenhouse)"
        badly = await session.call_tool("sensor_history", {"name": "greenhouse", "since": "soon"})
        assert badly.is_error and "soon" in text(badly)
        too_many = await session.call_tool("sensor_history", {"name": "greenhouse", "points": 5000})
        assert too_many.is_error

    same = await edge_cli("sensors", "history", "greenhouse", "temperature", "--points", "48",
                          "--since", span["since"], "--until", span["until"], env=env)
    assert same["via"] == "daemon" and same["data"]["series"] == [series]
    audit = await edge_cli("history", env=env)
    assert not any("mcp:" in str(record) for record in audit["data"]["records"])  # only reads
