"""What a chart shows besides its line, read off the figure (matplotlib's Agg) and the chart's
figures, not its pixels: a new install's chart begins at its first reading and says so, the
rules' thresholds are lines with their hysteresis bands, and the outputs beneath are those the
person names, else those the rules switch and any that switched (the schedule's pump too)."""

from __future__ import annotations

import time
from datetime import datetime
from pathlib import Path

import pytest

from edge.audit import AUDIT_FILE, AuditTrail
from edge.charts.draw import DAY, chart_figure
from edge.charts.service import ZOOM_MARGIN, draw_chart
from edge.config.loader import load_config
from edge.config.schedules import local_zone
from edge.core.actuation import Actuation
from edge.readings.store import Entry, ReadingStore
from tests.charts.greenhouse import RULES, write_week

PUMP = """
[boards.gpio.aliases]
pump = "GPIO22"
[boards.gpio.pins]
pump = { mode = "output", safe = "off" }
"""


@pytest.fixture
def config(write_config, isolated_env):
    extra = RULES.replace('[boards.gpio.aliases]\nfan = "GPIO18"\n[boards.gpio.pins]\n'
                          'fan = { mode = "output", safe = "off" }\n', "")
    pins = ('[boards.gpio.aliases]\nfan = "GPIO18"\npump = "GPIO22"\n[boards.gpio.pins]\n'
            'fan = { mode = "output", safe = "off" }\npump = { mode = "output", safe = "off" }\n')
    return load_config(str(write_config(pins + extra)), env=isolated_env).config


async def readings_since(state_dir: Path, began: float, now: float) -> None:
    """A new install: the greenhouse read every 30 s from ``began`` until ``now``, nothing before."""
    store = ReadingStore.in_state_dir(state_dir)
    count = int((now - began) // 30)
    await store.write([Entry("greenhouse", "temperature", "°C", began + i * 30, 20.0 + i % 9)
                       for i in range(count)])
    await store.close()


async def test_a_new_install_is_drawn_from_its_first_reading_and_says_so(config, tmp_path):
    now = time.time()
    began = now - 3 * 3600.0 - 17  # the agent has run three hours of the 24 asked for
    await readings_since(tmp_path, began, now)
    chart = await draw_chart(config, tmp_path, "greenhouse", since=now - DAY, until=now)
    assert chart.began_at == began and chart.history_began
    assert chart.start == pytest.approx(began - ZOOM_MARGIN * (now - began))
    at = datetime.fromtimestamp(began, local_zone()).strftime("%H:%M")
    assert chart.caption().startswith(f"greenhouse, since {at}, when readings began: temperature ")
    figure = chart_figure(chart.series, chart.tracks, start=chart.start)
    left, right = figure.axes[0].get_xlim()
    assert left == pytest.approx(chart.start / DAY) and right == pytest.approx(now / DAY)

    week = await write_week(tmp_path / "old", now)  # a week of history: the whole day is drawn
    old = await draw_chart(config, week.state_dir, "greenhouse", since=now - DAY, until=now)
    assert old.began_at is None and old.start is None
    assert old.caption().startswith("greenhouse, last 1d: temperature ")


async def test_a_late_first_reading_in_an_older_history_is_not_called_its_beginning(
        config, tmp_path):
    now = time.time()
    store = ReadingStore.in_state_dir(tmp_path)
    await store.write([Entry("greenhouse", "temperature", "°C", now - 3 * DAY + i * 60, 20.0)
                       for i in range(60)])  # three days ago; then the agent was off
    await store.close()
    await readings_since(tmp_path, now - 2 * 3600.0, now)
    chart = await draw_chart(config, tmp_path, "greenhouse", since=now - DAY, until=now)
    assert chart.began_at is not None and not chart.history_began
    assert ", the first reading of the last 1d: " in chart.caption()


async def test_the_rules_threshold_is_a_line_and_its_hysteresis_a_band(config, tmp_path):
    week = await write_week(tmp_path, time.time())
    chart = await draw_chart(config, week.state_dir, "greenhouse", since=week.now - DAY)
    [threshold] = chart.thresholds  # fan: greenhouse.temperature > 26, hysteresis 1
    assert (threshold.rule, threshold.threshold, threshold.band) == ("fan", 26.0, (25.0, 26.0))
    figure = chart_figure(chart.series, chart.tracks, thresholds=chart.thresholds)
    panel = figure.axes[0]
    [line] = [a for a in panel.get_lines() if a.get_gid() == "threshold:fan"]
    assert list(line.get_ydata()) == [26.0, 26.0] and line.get_linestyle() == "--"
    [band] = [p for p in panel.patches if p.get_gid() == "hysteresis:fan"]
    corners = band.get_path().transformed(band.get_patch_transform()).vertices
    assert (min(corners[:, 1]), max(corners[:, 1])) == (25.0, 26.0)
    [label] = [t for t in panel.texts if t.get_gid() == "threshold-label:fan"]
    assert label.get_text() == "fan (> 26)"
    low, high = panel.get_ylim()
    assert low < 25.0 and high > 26.0
    for track in figure.axes[1:]:  # the tracks beneath carry no threshold
        assert not [a for a in track.get_lines() if (a.get_gid() or "").startswith("threshold")]


async def test_a_rule_below_its_threshold_clears_above_it(write_config, isolated_env, tmp_path):
    rules = RULES.replace('when = "greenhouse.temperature > 26"', 'when = "greenhouse.temperature < 14"')
    config = load_config(str(write_config(rules.replace("hysteresis = 1", "hysteresis = 1.5"))),
                         env=isolated_env).config
    week = await write_week(tmp_path, time.time())
    chart = await draw_chart(config, week.state_dir, "greenhouse", since=week.now - DAY)
    assert [t.band for t in chart.thresholds] == [(14.0, 15.5)]
    assert chart.figures()["thresholds"] == [{"rule": "fan", "quantity": "temperature",
                                              "op": "<", "threshold": 14.0, "band": [14.0, 15.5]}]


async def pump_runs(state_dir: Path, now: float) -> None:
    """The schedule ran the pump twice in the last day: no rule on the greenhouse switches it."""
    audit = AuditTrail(state_dir / AUDIT_FILE)
    for start in (now - 20 * 3600.0, now - 2 * 3600.0):
        for at, value, action in ((start, 1.0, "write"), (start + 90, 0.0, "auto-off")):
            await audit.record(Actuation(at=at, board="gpio", pin="GPIO22", label="pump",
                                         action=action, asked=value, read_back=value,
                                         caller="schedule:water", door="schedule"))
    audit.close()


async def test_the_outputs_beneath_are_the_rules_and_any_that_switched(config, tmp_path):
    week = await write_week(tmp_path, time.time())
    await pump_runs(week.state_dir, week.now)
    chart = await draw_chart(config, week.state_dir, "greenhouse", since=week.now - DAY)
    assert [t.label for t in chart.tracks] == ["fan", "pump"]  # the pump's runs, no longer missing
    [pump] = [t for t in chart.tracks if t.label == "pump"]
    assert [(round(end - start)) for start, end in pump.on] == [90, 90]
    assert "; pump on 2 times" in chart.caption()

    named = await draw_chart(config, week.state_dir, "greenhouse", since=week.now - DAY,
                             outputs=["pump"])
    assert [t.label for t in named.tracks] == ["pump"] and named.figures()["tracks"] == ["pump"]
    none = await draw_chart(config, week.state_dir, "greenhouse", since=week.now - DAY, outputs=[])
    assert none.tracks == ()
    figure = chart_figure(named.series, named.tracks)
    assert [ax.get_yticklabels()[0].get_text() for ax in figure.axes[1:]] == ["pump"]

    hours = await draw_chart(config, week.state_dir, "greenhouse", since=week.now - 6 * 3600.0)
    assert [t.label for t in hours.tracks][-1] == "pump"  # the run two hours ago
    older = await draw_chart(config, week.state_dir, "greenhouse", since=week.now - 30 * 60.0)
    assert "pump" not in [t.label for t in older.tracks]  # nothing switched it in half an hour
