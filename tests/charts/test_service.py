"""A sensor's chart from what the agent keeps, and the errors that say what to do: an unknown
sensor or quantity names the known ones, no history says so, no matplotlib says how to get it."""

from __future__ import annotations

import asyncio
import io
import os
import stat
import sys
import time

import pytest

from edge.charts.service import (
    KEPT_CHARTS,
    MAX_PANELS,
    MAX_POINTS,
    SensorCharts,
    chart_png,
    draw_chart,
)
from edge.charts.tracks import read_tracks, rule_outputs
from edge.config.loader import load_config
from edge.core.exc import EdgeError, UsageError
from tests.charts.greenhouse import DAY, RULES, write_station, write_week


@pytest.fixture
def config(write_config, isolated_env):
    return load_config(str(write_config(RULES)), env=isolated_env).config


async def test_the_chart_of_a_configured_sensor_has_its_figures_and_its_fan(config, tmp_path):
    week = await write_week(tmp_path, time.time())
    chart = await draw_chart(config, tmp_path, "greenhouse", since=week.now - DAY)
    assert chart.png.startswith(b"\x89PNG") and len(chart.png) > 20_000
    [series] = chart.series
    summary = series.summary()
    assert 11.0 < summary.low < 13.0 and 27.0 < summary.high < 29.0  # 20 ± 8 °C over a day
    assert summary.failing >= 20  # two hours of failed reads, in 5-minute buckets
    assert [t.label for t in chart.tracks] == ["fan"] and len(chart.tracks[0].refusals) == 1
    caption = chart.caption()
    assert caption == (f"greenhouse, last 1d: temperature {summary.low:.1f}–{summary.high:.1f} °C, "
                       f"mean {summary.mean:.1f} °C; fan on {len(chart.tracks[0].on)} time"
                       f"{'s' * (len(chart.tracks[0].on) > 1)}, 1 refused")


async def test_a_sensor_nobody_configured_lists_the_known_ones(config, tmp_path):
    with pytest.raises(UsageError, match=r"no sensor 'shed' \(sensors: greenhouse\)"):
        await chart_png(config, tmp_path, "shed", since=time.time() - DAY)
    with pytest.raises(UsageError, match="greenhouse has no 'rain' .it reads: temperature, "
                                         "pressure, humidity"):
        await chart_png(config, tmp_path, "greenhouse", "rain", since=time.time() - DAY)


async def test_no_history_yet_says_so(config, tmp_path):
    with pytest.raises(EdgeError, match="no history of greenhouse in the last 1d yet"):
        await chart_png(config, tmp_path, "greenhouse", since=time.time() - DAY)
    week = await write_week(tmp_path, time.time() - 30 * DAY)  # a month ago, nothing since
    with pytest.raises(EdgeError, match="no history of greenhouse temperature in the last 1d"):
        await chart_png(config, tmp_path, "greenhouse", "temperature", since=time.time() - DAY)
    assert await chart_png(config, tmp_path, "greenhouse", since=week.now - DAY, until=week.now)


async def test_without_matplotlib_the_error_says_how_to_get_it(config, tmp_path, monkeypatch):
    await write_week(tmp_path, time.time())
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if it were not installed
    with pytest.raises(EdgeError) as caught:
        await chart_png(config, tmp_path, "greenhouse", since=time.time() - DAY)
    said = str(caught.value)
    assert said.startswith("charts need matplotlib (matplotlib: not installed")
    assert "pip install matplotlib" in said and "sudo apt install python3-matplotlib" in said
    assert "--system-site-packages" in said


async def test_the_agent_keeps_its_last_charts_in_the_outbox_only(config, tmp_path):
    week = await write_week(tmp_path / "state", time.time())
    outbox = tmp_path / "outbox"
    charts = SensorCharts(config, week.state_dir, outbox)
    old = outbox / "chart-greenhouse-0.png"
    outbox.mkdir()
    for n in range(KEPT_CHARTS):
        drawn = outbox / f"chart-greenhouse-{n}.png"
        drawn.write_bytes(b"\x89PNG old")
        os.utime(drawn, (week.now - 1000 + n, week.now - 1000 + n))
    mine = outbox / "photo.png"
    mine.write_bytes(b"\x89PNG not a chart")
    path, chart = await charts.to_outbox("greenhouse", None, back=6 * 3600)
    assert path.parent == outbox and path.read_bytes() == chart.png
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert len(list(outbox.glob("chart-*.png"))) == KEPT_CHARTS and not old.exists()
    assert mine.exists()  # what is not a chart is not the charts' to remove


async def test_an_output_on_when_the_window_opens_is_on_from_its_start(tmp_path):
    week = await write_week(tmp_path, time.time())
    first_on, first_off = week.fan_runs[0]
    since = (first_on + first_off) / 2
    [track] = read_tracks(tmp_path / "audit.db", ["fan"], since=since, until=since + 3600)
    assert track.on[0] == (since, min(first_off, since + 3600))


def test_the_outputs_are_those_the_rules_on_the_sensor_switch(config):
    from edge.config.rules import RuleConfig

    rules = [*config.rules,
             RuleConfig(name="arm", when="greenhouse.humidity > 90", then="gpio servo vent 90"),
             RuleConfig(name="cold", when="shed.temperature < 2", then="gpio write heater on"),
             RuleConfig(name="mist", when="greenhouse.humidity < 40",
                        then=["gpio pwm mister 0.5 for 10m", "notify misting", "gpio write fan on"])]
    assert rule_outputs(rules, "greenhouse") == ["fan", "mister"]  # no servo, no other sensor
    assert rule_outputs(rules, "shed") == ["heater"]


async def test_charts_asked_at_once_come_out_alike(config, tmp_path):
    """The control socket's charts and the chat's may be asked together, each drawn in a thread:
    the same chart comes out the same, byte for byte."""
    week = await write_week(tmp_path, time.time())
    asked = [chart_png(config, tmp_path, "greenhouse", since=week.now - DAY, until=week.now)
             for _ in range(3)]
    first, *others = await asyncio.gather(*asked)
    assert first.startswith(b"\x89PNG") and all(other == first for other in others)


async def test_a_chart_of_twelve_quantities_draws_four_the_size_of_four_and_names_the_rest(
        config, tmp_path):
    from PIL import Image

    now = time.time()
    names = await write_station(tmp_path / "twelve", now, 12)
    await write_station(tmp_path / "four", now, 4)
    twelve = await draw_chart(config, tmp_path / "twelve", "station", since=now - DAY, until=now)
    four = await draw_chart(config, tmp_path / "four", "station", since=now - DAY, until=now)
    assert [s.quantity for s in twelve.series] == names[:MAX_PANELS] and MAX_PANELS == 4
    assert twelve.left_out == tuple(names[4:]) and four.left_out == ()
    sizes = [Image.open(io.BytesIO(c.png)).size for c in (twelve, four)]
    assert sizes[0] == sizes[1] and sizes[0][0] == 1080
    assert all(len(s.buckets) <= MAX_POINTS for s in twelve.series)  # fewer than its pixels
    assert twelve.caption().endswith(
        "; 8 more not drawn (q04, q05, q06, q07, q08, q09, q10, q11): name one to chart it")
    alone = await draw_chart(config, tmp_path / "twelve", "station", "q11", since=now - DAY,
                             until=now)
    assert [s.quantity for s in alone.series] == ["q11"] and alone.left_out == ()
