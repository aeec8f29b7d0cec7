"""A sensor's chart from what the agent keeps: its history (:mod:`edge.readings`), the outputs its
rules switch and any other that switched (from the audit trail, :mod:`edge.charts.tracks`), or
those the person names, and the rules' thresholds (:mod:`edge.charts.thresholds`), drawn by
:mod:`edge.charts.draw`; a span that starts long before the first reading is drawn from it.

:func:`chart_png` is the whole of it for ``edge-cli sensors chart``; :class:`SensorCharts` is the
agent's: it also writes the picture into the outbox (the one directory a reply's
``[IMAGE:path]`` may send from), keeps the last :data:`KEPT_CHARTS` there, and draws one chart
at a time (a drawing keeps a core busy for a third of a second on the build machine, more on a
Pi: ``python -m bench charts``).

Errors say what to do: an unknown sensor or quantity is a :class:`~edge.core.exc.UsageError`
naming the known ones; no history in the window, or no matplotlib, an
:class:`~edge.core.exc.EdgeError` saying how to get it.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from edge.audit import AUDIT_FILE
from edge.charts.draw import readable, render_chart, when_text  # matplotlib loads inside
from edge.charts.thresholds import RuleThreshold, rule_thresholds
from edge.charts.tracks import OutputTrack, output_tracks
from edge.config.model import Config
from edge.config.schedules import local_zone
from edge.core.durations import format_duration
from edge.core.exc import EdgeError, UsageError
from edge.core.files import write_atomically
from edge.core.wheels import install_hint
from edge.readings.series import Series
from edge.readings.store import ReadingStore

log = logging.getLogger(__name__)

MAX_POINTS = 300
"""Buckets per quantity: a 24-hour chart is drawn in 5-minute minimum/mean/maximum."""
MAX_PANELS = 4
"""Quantities drawn in one chart when none is named (a BME280 has three): the figure's size, and
so its memory, is bounded whatever the sensor reads; the caption names the quantities left out."""
KEPT_CHARTS = 20
"""Chart files kept in the outbox; older ones are removed as new ones are drawn."""
CHART_PREFIX = "chart-"
ZOOM_AFTER = 0.1
"""A chart whose first reading comes later than this share of its span after the span's start
(a new install's 24 hours) begins at that reading, with a margin of :data:`ZOOM_MARGIN` of what
is drawn, instead of a span that is mostly grey."""
ZOOM_MARGIN = 0.03
HOUR_SECONDS = 3600.0


def plotting_missing() -> str | None:
    """What to do to draw charts here, or None when matplotlib is installed."""
    return install_hint("charts", "matplotlib", "matplotlib", "python3-matplotlib")


def known_sensors(config: Config, store_known: dict[str, dict[str, str]]) -> dict[str, dict[str, str]]:
    """Sensor -> quantity -> unit: the configured sensors, and those the history still has."""
    known = {name: dict(section.units) for name, section in config.sensors.items()}
    for name, quantities in store_known.items():
        known.setdefault(name, {}).update({q: u for q, u in quantities.items()
                                           if q not in known[name]})
    return known


def _check_names(known: dict[str, dict[str, str]], sensor: str, quantity: str | None) -> None:
    if sensor not in known:
        names = ", ".join(sorted(known)) or "none configured"
        raise UsageError(f"no sensor {sensor!r} (sensors: {names})")
    if quantity is not None and quantity not in known[sensor]:
        raise UsageError(f"sensor {sensor} has no {quantity!r} (it reads: "
                         f"{', '.join(known[sensor]) or 'nothing yet'})")


@dataclass(frozen=True)
class Chart:
    """A drawn chart: the PNG and what it shows (the figures say it in words too)."""

    png: bytes
    series: tuple[Series, ...]
    tracks: tuple[OutputTrack, ...]
    left_out: tuple[str, ...] = ()
    """Quantities with history past :data:`MAX_PANELS`, not drawn."""
    thresholds: tuple[RuleThreshold, ...] = ()
    """The rules' thresholds drawn on the panels."""
    began_at: float | None = None
    """When the chart's time axis is zoomed to the first reading (see :data:`ZOOM_AFTER`): that
    reading's time; None: the whole span asked for is drawn."""
    history_began: bool = False
    """The sensor's history begins at ``began_at`` (a new install), not only this span's."""
    start: float | None = None
    """Where the time axis begins when zoomed: ``began_at`` less a margin."""

    def figures(self) -> dict[str, object]:
        """What the chart shows besides its series, for the tool's and the operation's data."""
        return {"began_at": self.began_at, "history_began": self.history_began,
                "start": self.start,
                "tracks": [t.label for t in self.tracks],
                "thresholds": [{"rule": t.rule, "quantity": t.quantity, "op": t.op,
                                "threshold": t.threshold, "band": list(t.band)}
                               for t in self.thresholds]}

    def caption(self) -> str:
        """``greenhouse, last 1d: temperature 11.7–28.3 °C, mean 19.3 °C; fan on 1 time, 1
        refused``; zoomed: ``greenhouse, since 09:12, when readings began: ...``."""
        first = self.series[0]
        parts = []
        for one in self.series:
            s = one.summary()
            unit = f" {one.unit}" if one.unit else ""
            if s.low is not None and s.high is not None and s.mean is not None:
                parts.append(f"{one.quantity} {readable(s.low)}–{readable(s.high)}{unit}, "
                             f"mean {readable(s.mean)}{unit}")
        for track in self.tracks:
            refused = f", {len(track.refusals)} refused" if track.refusals else ""
            parts.append(f"{track.label} on {len(track.on)} time{'s' * (len(track.on) != 1)}{refused}")
        if self.left_out:
            parts.append(f"{len(self.left_out)} more not drawn ({', '.join(self.left_out)}): "
                         "name one to chart it")
        span = format_duration(first.until - first.since, most=2)
        if self.began_at is None:
            return f"{first.sensor}, last {span}: " + "; ".join(parts)
        at = when_text(self.began_at, local_zone(), first.until - self.began_at)
        why = "when readings began" if self.history_began else f"the first reading of the last {span}"
        return f"{first.sensor}, since {at}, {why}: " + "; ".join(parts)


async def draw_chart(config: Config, state_dir: Path, sensor: str, quantity: str | None = None, *,
                     since: float, until: float | None = None,
                     store: ReadingStore | None = None,
                     outputs: Sequence[str] | None = None) -> Chart:
    """``sensor``'s chart over ``[since, until)`` (until: now), from ``store`` (default: the
    state directory's history, opened read-only for this call), with ``outputs`` (pin names or
    aliases) as tracks beneath (None: those the rules on the sensor switch, and any other that
    switched in the span)."""
    missing = plotting_missing()
    if missing:
        raise EdgeError(missing)
    if until is None:  # now, on the history's clock (a test's may run fast)
        until = store.clock() if store is not None else time.time()
    own = store is None
    reader = ReadingStore.in_state_dir(state_dir, read_only=True) if store is None else store
    try:
        known = known_sensors(config, await reader.catalog())
        _check_names(known, sensor, quantity)
        found = await reader.series(sensor, quantity, since, until, max_points=MAX_POINTS)
        history_began = await reader.began(sensor)
    finally:
        if own:
            await reader.close()
    with_history = [s for s in found if any(b.mean is not None for b in s.buckets)]
    drawn, left_out = with_history[:MAX_PANELS], tuple(s.quantity for s in with_history[MAX_PANELS:])
    if not drawn:
        what = f"{sensor} {quantity}" if quantity else sensor
        raise EdgeError(f"no history of {what} in the last {format_duration(until - since, most=2)} "
                        "yet: readings are kept while the agent runs; ask for a longer time (e.g. "
                        "7d), or again once it has read the sensor")
    began_at = _zoomed_to(drawn, since, until)
    start = None if began_at is None else max(since, began_at - ZOOM_MARGIN * (until - began_at))
    tracks = await output_tracks(config.rules, sensor, state_dir / AUDIT_FILE,
                                 since=since if start is None else start, until=until,
                                 outputs=outputs)
    thresholds = [t for t in rule_thresholds(config.rules, sensor)
                  if t.quantity in {s.quantity for s in drawn}]
    png = await asyncio.to_thread(_render, drawn, tracks, thresholds, start)
    if left_out:
        log.info("chart_quantities_left_out sensor=%s drawn=%d left_out=%d", sensor, len(drawn),
                 len(left_out))
    began_here = began_at is not None and (history_began is None
                                           or history_began > since - HOUR_SECONDS)
    return Chart(png, tuple(drawn), tuple(tracks), left_out, tuple(thresholds), began_at,
                 began_here, start)


def _zoomed_to(drawn: Sequence[Series], since: float, until: float) -> float | None:
    """The first reading of ``drawn`` when it comes late enough in ``[since, until)`` for the
    chart to begin there (:data:`ZOOM_AFTER`); else None."""
    firsts = [at for s in drawn if (at := s.summary().first_at) is not None]
    if not firsts or min(firsts) - since <= ZOOM_AFTER * (until - since):
        return None
    return min(firsts)


def _render(series: Sequence[Series], tracks: Sequence[OutputTrack],
            thresholds: Sequence[RuleThreshold] = (), start: float | None = None) -> bytes:
    started = time.perf_counter()
    png = render_chart(series, tracks, thresholds=thresholds, start=start)
    # a figure is some ten thousand objects in reference cycles: collected now, a long-running
    # agent's RSS stays flat after its first chart instead of growing some 4 MB a chart until the
    # oldest generation's turn comes (about 50 ms on a PC; bench/bench_charts.py)
    gc.collect()
    log.info("chart_drawn sensor=%s panels=%d tracks=%d bytes=%d seconds=%.2f", series[0].sensor,
             len(series), len(tracks), len(png), time.perf_counter() - started)
    return png


async def chart_png(config: Config, state_dir: Path, sensor: str, quantity: str | None = None, *,
                    since: float, until: float | None = None,
                    store: ReadingStore | None = None,
                    outputs: Sequence[str] | None = None) -> bytes:
    """The PNG of :func:`draw_chart` (``edge-cli sensors chart`` writes it to a file)."""
    return (await draw_chart(config, state_dir, sensor, quantity, since=since, until=until,
                             store=store, outputs=outputs)).png


class SensorCharts:
    """The agent's charts: drawn one at a time and written into ``outbox`` for a reply to send."""

    def __init__(self, config: Config, state_dir: Path, outbox: Path, *,
                 store: ReadingStore | None = None,
                 before_read: Callable[[], Awaitable[None]] | None = None):
        self.config = config
        self.state_dir = state_dir
        self.outbox = outbox
        self.store = store
        """The agent's history (the recorder's store); None: opened read-only for each chart."""
        self.before_read = before_read
        """Writes the readings still buffered (the recorder's), so the chart ends now."""
        self._drawing = asyncio.Lock()

    async def to_outbox(self, sensor: str, quantity: str | None, *, back: float,
                        outputs: Sequence[str] | None = None) -> tuple[Path, Chart]:
        """The chart of the last ``back`` seconds (``outputs`` as :func:`draw_chart` takes
        them), written into the outbox; its path."""
        async with self._drawing:
            if self.before_read is not None:
                await self.before_read()
            now = self.store.clock() if self.store is not None else time.time()
            chart = await draw_chart(self.config, self.state_dir, sensor, quantity,
                                     since=now - back, until=now, store=self.store,
                                     outputs=outputs)
        path = self.outbox / f"{CHART_PREFIX}{sensor}-{time.time_ns()}.png"
        await asyncio.to_thread(self._keep, path, chart.png)
        return path, chart

    def _keep(self, path: Path, png: bytes) -> None:
        self.outbox.mkdir(mode=0o700, parents=True, exist_ok=True)
        write_atomically(path, png, durable=False)
        charts = sorted(self.outbox.glob(f"{CHART_PREFIX}*.png"), key=lambda p: p.stat().st_mtime_ns)
        for old in charts[:-KEPT_CHARTS]:
            old.unlink(missing_ok=True)
