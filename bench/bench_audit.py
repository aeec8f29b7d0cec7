"""The audit trail under a flood of refusals: ``[audit] max_megabytes = 1``, refused writes
through the real door (:class:`edge.hardware.Hardware` on gpiozero's mock pins, the policy
refusing pins that are not allowlisted) for SECONDS of wall time, fifty callers at once, with a
real switch of the pump between bursts.

Two floods: every refusal from a caller of its own (an anonymous broker's clients: nothing to
fold, so the cap does the work), and one caller repeating itself (folded into one row with a
count). Figures: refusals a second, the largest size on disk (database + write-ahead log, after
every burst), the rows kept, and whether every switch of the pump is still there.

Target (issue 37): the file stays under the cap plus one group commit; no switch pushed out.
Baseline before: the cap was held hourly, and 60 s of refusals left 5.44 MB with a 1 MB cap."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import tempfile
import time
from pathlib import Path

from gpiozero.pins.mock import MockFactory, MockPWMPin

from edge.audit import AuditTrail, read_history
from edge.audit_space import MIB
from edge.config.model import Config
from edge.core.exc import PolicyDenied
from edge.core.requester import Requester
from edge.hardware import build_hardware

SECONDS = 60.0
BURST = 50
CONFIG = {"security": {"max_actuations_per_minute": 6000},
          "boards": {"gpio": {"aliases": {"pump": "GPIO22"}, "pins": {
              "pump": {"mode": "output", "safe": "off", "max_switches_per_minute": 6000}}}}}


def on_disk(path: Path) -> int:
    wal = path.with_name(path.name + "-wal")
    return path.stat().st_size + (wal.stat().st_size if wal.exists() else 0)


async def flood(path: Path, one_caller: bool, seconds: float) -> dict[str, float]:
    factory = MockFactory(pin_class=MockPWMPin)
    hw = build_hardware(Config.model_validate(CONFIG), resident=True, pin_factory=factory)
    trail = AuditTrail(path, max_megabytes=1)
    hw.add_recorder(trail)
    await hw.start()
    owner = Requester("telegram", "42", why="turn")
    refused = switches = largest = 0
    started = time.perf_counter()

    async def refuse(burst: int, i: int) -> None:
        caller = "anonymous" if one_caller else f"anonymous-{burst}-{i}"
        with contextlib.suppress(PolicyDenied):
            await hw.write("GPIO5", True, Requester("mqtt", caller, why="chat"))
    burst = 0
    while time.perf_counter() - started < seconds:
        await hw.write("pump", burst % 2 == 0, owner)
        switches += 1
        await asyncio.gather(*(refuse(burst, i) for i in range(BURST)))
        refused += BURST
        burst += 1
        largest = max(largest, on_disk(path))
    wall = time.perf_counter() - started
    await hw.shutdown()
    trail.close()
    factory.reset()
    kept = read_history(path, limit=10_000_000)
    pump = sum(1 for a in kept if a.label == "pump" and a.action == "write")
    return {"refused": refused, "per_second": refused / wall, "largest": largest,
            "final": on_disk(path), "rows": len(kept), "switches": switches, "pump_kept": pump}


def main() -> None:
    logging.disable(logging.WARNING)  # a refusal logs a line each: the figures are the point
    print(f"audit trail under a flood of refusals, [audit] max_megabytes = 1, {SECONDS:g} s each "
          f"(target: under 1 MiB + one group commit, every switch kept)")
    print(f"  {'flood':<22} {'refusals':>9} {'per s':>7} {'largest':>10} {'final':>10} "
          f"{'rows':>7} {'switches kept':>14}")
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        for name, one in (("a caller each", False), ("one caller, repeated", True)):
            got = asyncio.run(flood(Path(tmp) / f"{one}.db", one, SECONDS))
            print(f"  {name:<22} {got['refused']:>9.0f} {got['per_second']:>7.0f} "
                  f"{got['largest'] / MIB:>8.2f}MB {got['final'] / MIB:>8.2f}MB "
                  f"{got['rows']:>7.0f} {got['pump_kept']:>6.0f} of {got['switches']:<5.0f}",
                  flush=True)
            failed |= got["largest"] > MIB + 256 * 1024 or got["pump_kept"] != got["switches"]
    if failed:
        print("FAILED: over the cap, or a switch was pushed out")
        raise SystemExit(1)
