"""The model's ``sensor_history`` tool: "how warm did it get last night" answered from the record,
with the figures (lowest, highest and when, mean) and at most about a hundred points."""

from __future__ import annotations

import time
from datetime import datetime
from pathlib import Path

import pytest

from edge.readings.store import Entry, ReadingStore
from edge.tools.sensor_history import SensorHistoryTool
from tests.helpers import asker

NOW = 1_800_000_000.0
CONFIGURED = {"greenhouse": {"temperature": "°C", "humidity": "%"}, "soil": {"moisture": "%"}}


@pytest.fixture
async def tool(tmp_path: Path):
    store = ReadingStore.in_state_dir(tmp_path, clock=lambda: NOW)
    # last night: 20 °C falling to 11.5 °C at 04:00 UTC, back to 20 by 08:00; every 30 s
    start = NOW - 8 * 3600  # 00:00 UTC
    await store.write([Entry("greenhouse", "temperature", "°C", start + i * 30,
                             11.5 + abs(i - 480) / 480 * 8.5) for i in range(960)])
    await store.write([Entry("greenhouse", "humidity", "%", start + i * 30, 60.0)
                       for i in range(960)])
    yield SensorHistoryTool(store, CONFIGURED)
    await store.close()


async def test_how_cold_it_got_last_night_with_when(tool: SensorHistoryTool) -> None:
    result = await tool.execute({"sensor": "greenhouse", "quantity": "temperature",
                                 "since": "12h"}, asker(via_model=True))
    assert result.success, result.error
    [series] = result.data["series"]  # type: ignore[index]
    assert series["summary"]["low"] == 11.5
    assert series["summary"]["low_at"] <= NOW - 4 * 3600 < series["summary"]["low_at"] + series["step"]
    assert series["summary"]["high"] == 20.0 and series["summary"]["count"] == 960
    assert len(series["buckets"]) <= 100
    lowest = time.strftime("%Y-%m-%d %H:%M", time.localtime(series["summary"]["low_at"]))
    assert f"low 11.5 at {lowest}" in result.output and "high 20 at" in result.output
    assert "(°C)" in result.output


async def test_every_quantity_when_none_is_named_and_an_iso_time_span(
        tool: SensorHistoryTool) -> None:
    since = datetime.fromtimestamp(NOW - 6 * 3600).isoformat()  # local, as people write it
    until = datetime.fromtimestamp(NOW - 2 * 3600).isoformat()
    result = await tool.execute({"sensor": "greenhouse", "since": since, "until": until},
                                asker())
    assert result.success, result.error
    assert [s["quantity"] for s in result.data["series"]] == ["humidity", "temperature"]  # type: ignore[index]
    for series in result.data["series"]:  # type: ignore[index]
        assert series["since"] == NOW - 6 * 3600 and series["until"] == NOW - 2 * 3600
        assert series["summary"]["count"] == 480


async def test_points_are_at_most_what_is_asked(tool: SensorHistoryTool) -> None:
    result = await tool.execute({"sensor": "greenhouse", "quantity": "temperature",
                                 "since": "8h", "points": 10}, asker())
    [series] = result.data["series"]  # type: ignore[index]
    assert len(series["buckets"]) <= 10 and series["step"] == 3600
    too_many = await tool.execute({"sensor": "greenhouse", "points": 5000}, asker())
    assert not too_many.success and "points" in (too_many.error or "")


@pytest.mark.parametrize(("args", "error", "unknown"), [
    ({"sensor": "barn"}, "no sensor 'barn' (sensors: greenhouse, soil)", "sensor"),
    ({"sensor": "greenhouse", "quantity": "pressure"},
     "sensor greenhouse has no 'pressure' (it reads: temperature, humidity)", "quantity"),
    ({"sensor": "greenhouse", "since": "yesterday"}, "'yesterday' is neither a duration", None),
    ({"sensor": "greenhouse", "since": "99999d"}, "'99999d' ago: must be at most 3650d", None),
    ({"sensor": "greenhouse", "since": "1h", "until": "2h"}, "must be before until", None),
])
async def test_what_cannot_be_answered_says_why(tool: SensorHistoryTool, args: dict[str, str],
                                                error: str, unknown: str | None) -> None:
    result = await tool.execute(args, asker())
    assert not result.success and error in (result.error or ""), result.error
    assert (result.data or {}).get("unknown") == unknown


async def test_a_configured_sensor_without_history_yet_is_no_error(
        tool: SensorHistoryTool) -> None:
    result = await tool.execute({"sensor": "soil"}, asker())
    assert result.success and result.data == {"series": []}
    assert "No history of soil" in result.output


async def test_the_figures_and_raw_readings_are_shown_to_the_second(tmp_path: Path) -> None:
    store = ReadingStore.in_state_dir(tmp_path / "many", clock=lambda: NOW)
    since = NOW - 3 * 3600
    await store.write([Entry("greenhouse", "temperature", "°C", since + i * 12, 20.0 + (i % 5))
                       for i in range(899)])  # every 12 s, more than the points asked
    await store.write([Entry("greenhouse", "temperature", "°C", NOW - 1, 17.6)])
    tool = SensorHistoryTool(store, CONFIGURED)
    try:
        result = await tool.execute({"sensor": "greenhouse", "since": "3h", "points": 50}, asker())
        few = await tool.execute({"sensor": "greenhouse", "since": "3h", "points": 1000},
                                 asker())
    finally:
        await store.close()
    last = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(NOW - 1))
    assert f", last 17.6 at {last}" in result.output
    high_at = result.data["series"][0]["summary"]["high_at"]  # type: ignore[index]
    assert f"high 24 at {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(high_at))}" in result.output
    assert high_at == since + 4 * 12  # the first reading of 24, not its bucket's start
    points = few.output.split("raw readings: ", 1)[1].split(", ")  # three hours of them
    assert len(points) == 900 and len({p.split()[0] for p in points}) == 900  # no two alike
    assert points[1] == time.strftime("%H:%M:%S", time.localtime(since + 12)) + " 21"
