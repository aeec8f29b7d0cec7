"""A 20-step scenario over a simulated week (the README's greenhouse, examples/greenhouse.toml:
the 06:00 watering each day, the fan's hysteresis), run as `edge-cli test` runs it: the agent
in process, every board and sensor simulated, the clock moved by the steps. Target: under 2 s,
start to stop. Then what running it loaded: no model, no charts (the modules that would say so)."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

from bench.process import row, rss_kib
from edge.config.loader import load_config
from edge.scenario.runner import run_scenario
from edge.scenario.steps import parse_scenario

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("matplotlib", "PIL", "numpy", "onnxruntime", "tokenizers", "openai", "httpx", "mcp",
         "aiomqtt")
DAY: list[dict[str, object]] = [{"until": "06:00"}, {"expect_pin": "pump", "is": "on"}]
FAN: list[dict[str, object]] = [
    {"sensor": "greenhouse.temperature", "value": 30}, {"wait": "2m"},
    {"expect_pin": "fan", "is": "on"}, {"sensor": "greenhouse.temperature", "value": 26},
    {"expect_pin": "fan", "is": "off"}, {"wait": "1h"}]
WEEK = DAY * 7 + FAN


def main() -> None:
    os.environ.setdefault("EDGE_MEMORY__EMBEDDER", "none")
    scenario = parse_scenario({"timezone": "Europe/Berlin", "start": "2026-03-23 05:00",
                               "steps": WEEK})
    loaded = load_config(str(ROOT / "examples" / "greenhouse.toml"))
    began = time.perf_counter()
    results = asyncio.run(run_scenario(scenario, loaded))
    seconds = time.perf_counter() - began
    failed = [r for r in results if r.status != "ok"]
    if failed:
        raise SystemExit(f"the bench scenario failed: {failed[0]}")
    print(f"a {len(results)}-step scenario over a simulated week ({results[-1].at}), in process")
    row("wall time, start to stop", f"{seconds:.2f} s", "target < 2 s")
    row("RSS after", f"{rss_kib(os.getpid()) / 1024:.1f} MB")
    loaded_heavy = [name for name in HEAVY if name in sys.modules]
    row("heavy modules loaded", ", ".join(loaded_heavy) or "none", "target none")
