"""A sensor's history as a PNG for a phone: one panel per quantity, an output track per pin the
rules on it switch, local time along the bottom.

- 1080 px wide, large type, the unit on the value axis and the figures (lowest and highest with
  when, the mean) above each panel.
- Aggregated buckets: the minimum-maximum band with the mean as a line. Raw readings: a line.
- Where there is no good reading (the sensor failing, or nothing recorded) the line breaks and the
  span is shaded: no line is ever drawn across missing time.
- Each output's on-periods as bars beneath, refused or failed actuations as red crosses.
- Each rule's threshold on the panel of its quantity: a dashed line labelled with the rule's
  name, its hysteresis band (where the rule stays on until it clears) shaded.
- The time axis starts where the chart is told (``start``: a new install's first reading, with
  a margin), not at a span that is mostly grey.

matplotlib (the Agg backend, without pyplot's global state) is imported here, when a chart is
drawn; :mod:`edge.charts` loads none of it. Drawing is blocking: callers run it in a thread.
"""

from __future__ import annotations

import io
import math
import statistics
import threading
import time
from collections.abc import Sequence
from contextlib import AbstractContextManager
from datetime import datetime, tzinfo
from typing import TYPE_CHECKING

from edge.charts.thresholds import RuleThreshold
from edge.charts.tracks import OutputTrack
from edge.config.schedules import local_zone
from edge.readings.series import Series

if TYPE_CHECKING:
    from matplotlib.artist import Artist
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

DAY = 86400.0
WIDTH_INCHES = 10.8
DPI = 100
"""1080 px wide: a phone shows it across the screen without scaling the type away."""
FONT_SIZE = 20
PANEL_INCHES = (5.2, 3.6)
"""A panel's height: one quantity alone, or each of several."""
TRACK_INCHES = 0.8
HEAD_INCHES = 1.5
FOOT_INCHES = 0.9
MEAN_COLOUR = "#1f5fbf"
BAND_COLOUR = "#9fc0ea"
GAP_COLOUR = "#d9d9d9"
ON_COLOUR = "#e8871e"
REFUSED_COLOUR = "#d62728"
THRESHOLD_COLOUR = "#b03a2e"
_DRAWING = threading.Lock()
RAW_HOLE_FACTOR = 3.0
"""Raw readings further apart than this many times their usual spacing leave a gap between them."""


def render_chart(series: Series | Sequence[Series], tracks: Sequence[OutputTrack] = (), *,
                 tz: tzinfo | None = None, thresholds: Sequence[RuleThreshold] = (),
                 start: float | None = None) -> bytes:
    """The PNG of ``series`` (one panel each, sharing the time axis) over ``tracks``, with times
    shown in ``tz`` (default: the system's zone). Raises ImportError without matplotlib. One
    chart at a time in the process: the style is matplotlib's global ``rcParams``, set for the
    drawing's length, and its font caches are not made for threads."""
    with _DRAWING:
        return png_bytes(chart_figure(series, tracks, tz=tz, thresholds=thresholds, start=start))


def chart_figure(series: Series | Sequence[Series], tracks: Sequence[OutputTrack] = (), *,
                 tz: tzinfo | None = None, thresholds: Sequence[RuleThreshold] = (),
                 start: float | None = None) -> Figure:
    """The chart as a matplotlib figure (its axes: the panels, then the tracks); ``thresholds``
    drawn on the panels of their quantities, the time axis from ``start`` (default: the
    series' start)."""
    from matplotlib.figure import Figure  # here: the agent loads matplotlib only to draw

    panels = [series] if isinstance(series, Series) else list(series)
    if not panels:
        raise ValueError("nothing to draw: no series")
    zone = tz or local_zone()
    since, until = min(s.since for s in panels), max(s.until for s in panels)
    if start is not None:
        since = max(since, min(start, until))
    panel_inches = PANEL_INCHES[0] if len(panels) == 1 else PANEL_INCHES[1]
    height = HEAD_INCHES + panel_inches * len(panels) + TRACK_INCHES * len(tracks) + FOOT_INCHES
    fig = Figure(figsize=(WIDTH_INCHES, height), dpi=DPI, layout="constrained")
    with _style():
        axes = fig.subplots(len(panels) + len(tracks), 1, sharex=True, squeeze=False,
                            height_ratios=[panel_inches] * len(panels) + [TRACK_INCHES] * len(tracks))[:, 0]
        for ax, one in zip(axes, panels, strict=False):
            _draw_series(ax, one, zone, until - since)
            for threshold in thresholds:
                if threshold.quantity == one.quantity:
                    _draw_threshold(ax, threshold)
        for ax, track in zip(axes[len(panels):], tracks, strict=True):
            _draw_track(ax, track)
        _time_axis(axes[-1], since, until, zone)
        fig.suptitle(f"{panels[0].sensor}  ·  {when_text(since, zone, until - since)} → "
                     f"{when_text(until, zone, until - since)}", fontsize=FONT_SIZE + 4,
                     fontweight="bold")
        handles, labels = _legend_entries(list(axes))
        fig.legend(handles, labels, loc="outside lower center", ncol=len(labels), frameon=False,
                   fontsize=FONT_SIZE - 4)
    return fig


def png_bytes(fig: Figure) -> bytes:
    """The figure as PNG, laid out (the axes' positions are final once this returns)."""
    out = io.BytesIO()
    with _style():
        fig.savefig(out, format="png", dpi=DPI, facecolor="white")
    return out.getvalue()


def _style() -> AbstractContextManager[None]:
    from matplotlib import rc_context

    return rc_context({"font.size": FONT_SIZE, "axes.titlesize": FONT_SIZE,
                       "axes.labelsize": FONT_SIZE, "xtick.labelsize": FONT_SIZE - 2,
                       "ytick.labelsize": FONT_SIZE - 2, "axes.grid": True, "grid.alpha": 0.35,
                       "axes.spines.top": False, "axes.spines.right": False,
                       "savefig.facecolor": "white"})


def readable(value: float) -> str:
    """Figures as a person reads them: ``21.4``, ``1013``, ``0.0042``."""
    if value == 0 or abs(value) >= 100:
        return f"{value:.0f}"
    return f"{value:.1f}" if abs(value) >= 1 else f"{value:.2g}"


def when_text(at: float, zone: tzinfo, span: float, *, month: bool = True) -> str:
    """A local time, with the weekday when the chart covers more than half a day, the day of
    the month (and the month) when more than six days."""
    moment = datetime.fromtimestamp(at, zone)
    if span <= DAY / 2:
        return moment.strftime("%H:%M")
    if span <= 6 * DAY:
        return moment.strftime("%a %H:%M")
    return moment.strftime("%a %d %b %H:%M" if month else "%a %d %H:%M")


def _points(series: Series) -> tuple[list[float], list[float], list[float], list[float],
                                     list[tuple[float, float]]]:
    """x (days since 1970, matplotlib's dates), mean, low, high with NaN where the line breaks,
    and the spans without a good reading (Unix seconds)."""
    nan = math.nan
    xs: list[float] = []
    means: list[float] = []
    lows: list[float] = []
    highs: list[float] = []
    holes: list[tuple[float, float]] = []
    good = [b for b in series.buckets if b.mean is not None]
    if series.step > 0:
        hole_after = series.step * 1.5
    else:
        spacing = [b.start - a.start for a, b in zip(good, good[1:], strict=False)]
        hole_after = RAW_HOLE_FACTOR * statistics.median(spacing) if spacing else math.inf
    previous: float | None = None
    hole_from: float | None = series.since
    for bucket in series.buckets:
        at = (bucket.start + bucket.end) / 2 if series.step > 0 else bucket.start
        if bucket.mean is None:
            if hole_from is None:
                hole_from = bucket.start if series.step > 0 else (previous or bucket.start)
            xs.append(at / DAY)
            means.append(nan)
            lows.append(nan)
            highs.append(nan)
            continue
        if previous is not None and at - previous > hole_after:  # time the series skips over
            xs.append((previous + at) / 2 / DAY)
            means.append(nan)
            lows.append(nan)
            highs.append(nan)
            if hole_from is None:
                hole_from = previous
        if hole_from is not None:
            hole_to = bucket.start if series.step > 0 else at
            if hole_to > hole_from:
                holes.append((hole_from, hole_to))
            hole_from = None
        xs.append(at / DAY)
        means.append(bucket.mean)
        lows.append(bucket.low if bucket.low is not None else bucket.mean)
        highs.append(bucket.high if bucket.high is not None else bucket.mean)
        previous = bucket.end if series.step > 0 else at
    if hole_from is None and previous is not None and series.until - previous > hole_after:
        hole_from = previous  # nothing recorded since the last reading
    if hole_from is not None and series.until > hole_from:
        holes.append((hole_from, series.until))
    return xs, means, lows, highs, holes


def _draw_threshold(ax: Axes, threshold: RuleThreshold) -> None:
    """The rule's threshold as a dashed line, its hysteresis band shaded, its name beside."""
    low, high = threshold.band
    if high > low:
        band = ax.axhspan(low, high, color=THRESHOLD_COLOUR, alpha=0.12, lw=0)
        band.set_gid(f"hysteresis:{threshold.rule}")
    line = ax.axhline(threshold.threshold, color=THRESHOLD_COLOUR, lw=2, ls="--")
    line.set_gid(f"threshold:{threshold.rule}")
    label = ax.text(0.995, threshold.threshold, threshold.label, transform=ax.get_yaxis_transform(),
                    ha="right", va="bottom" if threshold.op in (">", ">=") else "top",
                    color=THRESHOLD_COLOUR, fontsize=FONT_SIZE - 6)
    label.set_gid(f"threshold-label:{threshold.rule}")


def _draw_series(ax: Axes, series: Series, zone: tzinfo, shown: float | None = None) -> None:
    xs, means, lows, highs, holes = _points(series)
    for start, end in holes:
        ax.axvspan(start / DAY, end / DAY, color=GAP_COLOUR, alpha=0.6, lw=0, label="no readings")
    if series.step > 0:
        # opaque and above a rule's hysteresis shade (zorder 1): the band reads as the band
        ax.fill_between(xs, lows, highs, color=BAND_COLOUR, lw=0, zorder=1.2, label="min–max")
    ax.plot(xs, means, color=MEAN_COLOUR, lw=2.5, label="mean" if series.step > 0 else "reading")
    unit = f" ({series.unit})" if series.unit else ""
    ax.set_ylabel(f"{series.quantity}{unit}")
    ax.set_title(_figures(series, zone, shown), loc="left", fontsize=FONT_SIZE - 2)
    if all(math.isnan(v) for v in means):
        ax.text(0.5, 0.5, "no readings in this time", transform=ax.transAxes, ha="center",
                va="center", color="#555555")


def _figures(series: Series, zone: tzinfo, shown: float | None = None) -> str:
    summary = series.summary()
    span = shown or series.until - series.since
    unit = f" {series.unit}" if series.unit else ""
    if summary.mean is None or summary.low is None or summary.high is None:
        return f"{series.quantity}: no readings"
    low_at = when_text(summary.low_at or series.since, zone, span, month=False)
    high_at = when_text(summary.high_at or series.since, zone, span, month=False)
    return (f"min {readable(summary.low)}{unit} at {low_at}   max {readable(summary.high)}{unit} "
            f"at {high_at}   mean {readable(summary.mean)}{unit}")


def _draw_track(ax: Axes, track: OutputTrack) -> None:
    bars = [(start / DAY, (end - start) / DAY) for start, end in track.on]
    if bars:
        ax.broken_barh(bars, (0.15, 0.7), color=ON_COLOUR, label="output on")
    if track.refusals:
        ax.plot([t / DAY for t in track.refusals], [0.5] * len(track.refusals), ls="none",
                marker="X", ms=16, color=REFUSED_COLOUR, markeredgecolor="white", label="refused")
    if not bars and not track.refusals:
        ax.text(0.5, 0.5, "off throughout", transform=ax.transAxes, ha="center", va="center",
                color="#555555", fontsize=FONT_SIZE - 4)
    ax.set_ylim(0, 1)
    ax.set_yticks([0.5], [track.label])
    ax.grid(False, axis="y")
    ax.tick_params(axis="y", length=0)


def _time_axis(ax: Axes, since: float, until: float, zone: tzinfo) -> None:
    from matplotlib.dates import AutoDateLocator, ConciseDateFormatter

    locator = AutoDateLocator(tz=zone, minticks=4, maxticks=8)  # type: ignore[no-untyped-call]
    ax.xaxis.set_major_locator(locator)
    formats = ["%Y", "%b", "%a %d", "%H:%M", "%H:%M", "%S.%f"]  # days as "Fri 20"
    ax.xaxis.set_major_formatter(ConciseDateFormatter(  # type: ignore[no-untyped-call]
        locator, tz=zone, formats=formats))
    ax.set_xlim(since / DAY, until / DAY)
    ax.set_xlabel(f"local time ({datetime.fromtimestamp(until, zone).strftime('%Z') or time.tzname[0]})",
                  fontsize=FONT_SIZE - 4)


def _legend_entries(axes: Sequence[Axes]) -> tuple[list[Artist], list[str]]:
    """Each kind of mark once, in the order drawn."""
    handles: list[Artist] = []
    labels: list[str] = []
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            if label not in labels:
                handles.append(handle)
                labels.append(label)
    return handles, labels
