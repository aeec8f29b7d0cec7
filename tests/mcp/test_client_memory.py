"""The agent's memory under a 50 MB result stays within 20 MB of idle (the issue's bound; the
figure itself is measured in bench/bench_mcp.py): measured in a fresh interpreter
(tests/mcp/big_result.py), its peak RSS reset before the call."""

from __future__ import annotations

import subprocess
import sys

from tests.helpers import ROOT


def test_a_50_mb_result_costs_less_than_20_mb_over_idle() -> None:
    done = subprocess.run([sys.executable, "-m", "tests.mcp.big_result", "50000000"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    idle, peak, outcome = done.stdout.split()
    assert outcome == "refused"
    assert int(peak) - int(idle) < 20 * 1024, (idle, peak)
