"""The chart of the fast-clock week (``tests/readings/fast_week.py``'s greenhouse thermometer, read
every 30 s and kept by the recorder as the agent keeps it, with three failing hours on the
fourth night): the week and that night, drawn from the real history file and read back from the
PNG."""

from __future__ import annotations

from edge.charts.draw import DAY, MEAN_COLOUR, ON_COLOUR
from edge.charts.service import draw_chart
from edge.config.loader import load_config
from tests.charts.greenhouse import RULES
from tests.charts.pixels import Drawn, near
from tests.readings.fast_week import FAILING, START, WEEK, record_week


async def test_the_fast_clock_week_and_its_failing_night_are_charted(tmp_path, write_config,
                                                                     isolated_env):
    _, _, recorder, store = await record_week(tmp_path)
    await recorder.flush()
    config = load_config(str(write_config(RULES)), env=isolated_env).config
    failing = FAILING[0].timestamp(), FAILING[1].timestamp()
    try:
        week = await draw_chart(config, tmp_path, "greenhouse", since=START.timestamp(),
                                store=store)  # until: now, on the fast clock
        night = await draw_chart(config, tmp_path, "greenhouse", "temperature",
                                 since=failing[0] - 12 * 3600, until=failing[0] + 12 * 3600,
                                 store=store)
    finally:
        await recorder.aclose()

    [series] = week.series
    assert series.until == START.timestamp() + WEEK and len(series.buckets) <= 300
    summary = series.summary()
    assert (round(summary.low), round(summary.high)) == (15, 35)
    assert summary.failing == (failing[1] - failing[0]) / series.step  # the three hours, whole
    drawn = Drawn(week.series, week.tracks)
    assert drawn.image.size[0] == 1080
    assert any(near(p, MEAN_COLOUR) for p in drawn.column(0, START.timestamp() + 1.5 * DAY))
    assert not any(near(p, MEAN_COLOUR) for p in drawn.column(0, sum(failing) / 2))
    assert [t.label for t in week.tracks] == ["fan"] and week.tracks[0].on == ()
    assert not any(near(p, ON_COLOUR) for p in drawn.column(1, START.timestamp() + 3 * DAY))

    [series] = night.series
    assert series.step == 300 and len(series.buckets) == 288
    drawn = Drawn(night.series, night.tracks)
    assert not any(near(p, MEAN_COLOUR) for p in drawn.column(0, failing[0] + 60))
    assert not any(near(p, MEAN_COLOUR) for p in drawn.column(0, failing[1] - 60))
    assert any(near(p, MEAN_COLOUR) for p in drawn.column(0, failing[0] - 1800))
    assert any(near(p, MEAN_COLOUR) for p in drawn.column(0, failing[1] + 1800))
