"""Charts (issue 29): what drawing a 24-hour chart costs an agent, in time and in memory.

A week of one sensor's readings (one a minute, two hours failing) in a real history file and the
fan its rule switched in a real audit trail (``tests/charts/greenhouse.py``), in this interpreter
with the agent's modules loaded (``edge.runtime``). Figures: the first chart (it imports
matplotlib), then warm charts p50 and max; the RSS before any chart, what the first adds (most of
it numpy and matplotlib themselves) and what ten more add (about 9 MB of matplotlib's font and
text caches, then flat: forty more add no more; a leak would keep growing); the PNG's size. The
baseline, from the same run: reading the same 24 hours from the history without drawing. No
target: the issue asks for the figure.

Issue 37: a chart's memory whatever the number of quantities. A day of a station reading 1 and
12 quantities, each charted in a fresh interpreter with the agent's modules loaded: the peak RSS
(``VmHWM``, reset just before) the chart added, numpy's and matplotlib's imports included. A
chart draws at most four panels (``MAX_PANELS``), so twelve cost what four do.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.process import row, rss_kib
from edge.charts.service import MAX_POINTS, draw_chart
from edge.config.loader import load_config
from edge.readings.store import ReadingStore
from tests.charts.greenhouse import RULES, write_station, write_week

DAY = 86400.0
WARM_CHARTS = 10


def mb(kib: int) -> str:
    return f"{kib / 1024:.1f} MB"


async def measure(state: Path) -> None:
    import edge.runtime  # noqa: F401  (the agent's modules, as they are when a chart is asked for)

    week = await write_week(state, time.time())
    (state / "config.toml").write_text(RULES)
    config = load_config(str(state / "config.toml"), env={"EDGE_STATE_DIR": str(state)}).config
    since = week.now - DAY
    store = ReadingStore.in_state_dir(state)
    reads = []
    for _ in range(WARM_CHARTS):
        start = time.perf_counter()
        await store.series("greenhouse", None, since, week.now, max_points=MAX_POINTS)
        reads.append(time.perf_counter() - start)
    before = rss_kib(os.getpid())
    start = time.perf_counter()  # the first chart: its imports, then its drawing
    import matplotlib.backends.backend_agg  # noqa: F401  (what the first chart imports)
    import matplotlib.dates  # noqa: F401
    import matplotlib.figure  # noqa: F401

    imported, imports = rss_kib(os.getpid()), time.perf_counter() - start
    chart = await draw_chart(config, state, "greenhouse", since=since, until=week.now, store=store)
    first = time.perf_counter() - start
    after_first = rss_kib(os.getpid())
    warm = []
    for _ in range(WARM_CHARTS):
        start = time.perf_counter()
        await draw_chart(config, state, "greenhouse", since=since, until=week.now, store=store)
        warm.append(time.perf_counter() - start)
    after_warm = rss_kib(os.getpid())
    await store.close()
    print(f"a 24-hour chart of one sensor ({len(chart.series[0].buckets)} five-minute buckets, "
          f"{len(chart.tracks[0].on)} fan run(s) and a refusal beneath)")
    row("baseline: read 24 h from the history", f"{statistics.median(reads) * 1000:.1f} ms")
    row("first chart (imports matplotlib)", f"{first:.2f} s")
    row("  of which importing numpy and matplotlib", f"{imports:.2f} s")
    row(f"chart, warm: p50 / max of {WARM_CHARTS}",
        f"{statistics.median(warm):.2f} s / {max(warm):.2f} s")
    row("RSS before any chart (agent's modules)", mb(before))
    row("RSS added by the first chart", f"+{mb(after_first - before)}")
    row("  of which importing numpy and matplotlib", f"+{mb(imported - before)}")
    row(f"RSS added by {WARM_CHARTS} more (then flat)", f"{(after_warm - after_first) / 1024:+.1f} MB")
    row("PNG (1080 px wide)", f"{len(chart.png) / 1024:.0f} KB")


def peak_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise RuntimeError("no VmHWM")


async def station_chart(state: Path, quantities: int) -> dict[str, int]:
    """In this (fresh) interpreter: the RSS before a chart of ``quantities`` quantities and the
    peak while it is drawn, in KiB."""
    import edge.runtime  # noqa: F401  (the agent's modules)

    now = time.time()
    await write_station(state, now, quantities)
    (state / "config.toml").write_text("")
    config = load_config(str(state / "config.toml"), env={"EDGE_STATE_DIR": str(state)}).config
    store = ReadingStore.in_state_dir(state)
    await store.series("station", None, now - DAY, now, max_points=MAX_POINTS)  # sqlite warm
    before = rss_kib(os.getpid())
    Path("/proc/self/clear_refs").write_text("5")  # VmHWM := VmRSS
    chart = await draw_chart(config, state, "station", since=now - DAY, until=now, store=store)
    peak = peak_kib()
    await store.close()
    return {"before": before, "peak": peak, "panels": len(chart.series)}


def one_station(quantities: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        print(json.dumps(asyncio.run(station_chart(Path(tmp), quantities))))


def quantities_rows() -> None:
    print("the first chart of a station's day, 1 and 12 quantities (a fresh interpreter each)")
    for quantities in (1, 12):
        code = f"import bench.bench_charts as b; b.one_station({quantities})"
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             check=True, cwd=Path(__file__).parent.parent).stdout
        figures = json.loads(out.splitlines()[-1])
        row(f"{quantities} quantit{'y' if quantities == 1 else 'ies'}, {figures['panels']} drawn: "
            "RSS before / peak",
            f"{mb(figures['before'])} / {mb(figures['peak'])}", "",
            f"+{mb(figures['peak'] - figures['before'])}")


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(measure(Path(tmp)))
    quantities_rows()


if __name__ == "__main__":
    main()
