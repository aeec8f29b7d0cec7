"""The chart of a week of greenhouse readings, read back from the PNG: a phone's width, the gap
where the sensor failed left empty and shaded, the fan's runs and its refusal in their places."""

from __future__ import annotations

import io
import time

import pytest
from PIL import Image

from edge.charts.draw import BAND_COLOUR, DAY, MEAN_COLOUR, ON_COLOUR, REFUSED_COLOUR, render_chart
from edge.charts.tracks import output_tracks
from edge.config.rules import RuleConfig
from edge.readings.series import Bucket, Series
from edge.readings.store import ReadingStore
from tests.charts.greenhouse import Week, write_week
from tests.charts.pixels import Drawn, near, rgb

NOON = 12 * 3600.0
FAN_RULE = RuleConfig(name="fan", when="greenhouse.temperature > 26", then="gpio write fan on",
                      on_clear="gpio write fan off")


@pytest.fixture
async def week(tmp_path) -> Week:
    """The week up to yesterday's noon (UTC): the pixels looked for (a fan run's middle, the band
    an hour before the gap) depend on where the day's warmth falls. Ending at the hour the test
    ran, one hour in nine put the refusal inside a run's middle, or the gap at the day's
    warmest, where the band is thinner than the mean line drawn over it."""
    return await write_week(tmp_path, (time.time() // DAY - 1) * DAY + NOON)


async def day_of(week: Week, span: float = DAY):
    store = ReadingStore.in_state_dir(week.state_dir, read_only=True)
    series = await store.series("greenhouse", "temperature", week.now - span, week.now,
                                max_points=300)
    await store.close()
    tracks = await output_tracks([FAN_RULE], "greenhouse", week.state_dir / "audit.db",
                                 since=week.now - span, until=week.now)
    return series, tracks


async def test_a_day_of_a_week_is_a_phone_wide_png_with_its_gap_and_the_fans_runs(week):
    [series], tracks = await day_of(week)
    assert series.step == 300 and len(series.buckets) in (288, 289)  # 5-minute min/mean/max
    drawn = Drawn(series, tracks)
    assert drawn.png.startswith(b"\x89PNG\r\n\x1a\n")
    assert drawn.image.width == 1080 and 700 <= drawn.image.height <= 1400
    # the readings: the mean line and the band where the sensor read, nothing where it failed
    start, stop = week.failing
    read = drawn.column(0, start - 3600)
    assert any(near(p, MEAN_COLOUR) for p in read) and any(near(p, BAND_COLOUR, 60) for p in read)
    failed = drawn.column(0, (start + stop) / 2)
    assert not any(near(p, MEAN_COLOUR) or near(p, BAND_COLOUR, 20) for p in failed)
    assert len(set(failed)) <= 3 and failed[len(failed) // 2] != (255, 255, 255)  # shaded, flat
    # the fan: on in the middle of each of its runs within the day, off between two of them
    [fan] = tracks
    runs = [(a, b) for a, b in week.fan_runs if b > week.now - DAY]
    assert fan.on and len(fan.on) == len(runs)
    for a, b in fan.on:
        assert near(rgb(drawn.image, drawn.at(1, (a + b) / 2, 0.5)), ON_COLOUR)
    edges = [week.now - DAY, *[t for run in fan.on for t in run], week.now]
    off = max(zip(edges[::2], edges[1::2], strict=True), key=lambda span: span[1] - span[0])
    assert off[1] - off[0] > 3600
    assert not near(rgb(drawn.image, drawn.at(1, (off[0] + off[1]) / 2, 0.5)), ON_COLOUR)
    assert fan.refusals == (pytest.approx(week.refused_at),)
    assert near(rgb(drawn.image, drawn.at(1, week.refused_at, 0.5)), REFUSED_COLOUR)


async def test_the_whole_week_is_drawn_from_the_five_minute_figures(week):
    [series], tracks = await day_of(week, 7 * DAY)
    assert series.step >= 1800 and len(series.buckets) <= 300
    drawn = Drawn(series, tracks)
    summary = series.summary()
    # the day's warmest and coldest show where they are: the band reaches both
    warm = drawn.column(0, summary.high_at + series.step / 2)
    assert any(near(p, MEAN_COLOUR) for p in warm)
    assert len(tracks[0].on) >= 6  # a run a day


def test_raw_readings_with_a_hole_are_not_joined_across_it():
    """Raw readings (no buckets): a hole in time three times their spacing breaks the line."""
    now = 1_790_000_000.0
    times = [now - 3600 + i * 30 for i in range(120)]
    kept = [t for t in times if not now - 2400 <= t < now - 1800]
    series = Series("shed", "temperature", "°C", now - 3600, now, 0.0,
                    tuple(Bucket(t, t, 10.0, 10.0, 10.0, 1) for t in kept))
    drawn = Drawn(series, [])
    assert any(near(p, MEAN_COLOUR) for p in drawn.column(0, now - 3000))
    assert not any(near(p, MEAN_COLOUR) for p in drawn.column(0, now - 2100))


def test_every_quantity_is_a_panel_over_one_time_axis():
    now = 1_790_000_000.0
    grid = [now - DAY + i * 900 for i in range(96)]

    def quantity(name: str, unit: str, value: float) -> Series:
        return Series("greenhouse", name, unit, now - DAY, now, 900.0,
                      tuple(Bucket(t, t + 900, value - 1, value, value + 1, 3) for t in grid))

    png = render_chart([quantity("temperature", "°C", 21), quantity("humidity", "%", 60),
                        quantity("pressure", "hPa", 1013)])
    image = Image.open(io.BytesIO(png))
    assert image.width == 1080 and image.height > 1000  # three panels, still readable
