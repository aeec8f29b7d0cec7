"""Measuring: wall time and peak RSS of a child process, RSS of a running one, percentiles, and
when the hardware's outputs switched (for latencies that end at a pin)."""

from __future__ import annotations

import math
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, NamedTuple

BIN = Path(sys.executable).parent


class Measured(NamedTuple):
    """One child process, exec to exit (or the medians of several)."""

    seconds: float
    """Wall time."""
    rss_kib: int
    """Peak RSS."""
    cpu_seconds: float
    """User plus system time: what the process cost, apart from waiting for a busy machine's
    cores (on a quiet machine, wall time is this plus the process's own waits)."""


def run_measured(argv: list[str], env: dict[str, str] | None = None,
                 stdin: bytes | None = None) -> Measured:
    """Wall time, peak RSS and CPU time of one child process."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if stdin is not None:
        assert proc.stdin is not None
        proc.stdin.write(stdin)
        proc.stdin.close()
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"{argv} exited {proc.returncode}")
    return Measured(elapsed, usage.ru_maxrss, usage.ru_utime + usage.ru_stime)


def repeat(argv: list[str], runs: int = 15, env: dict[str, str] | None = None,
           stdin: bytes | None = None) -> Measured:
    """The medians of wall time, peak RSS and CPU time over ``runs`` (after one warm-up run)."""
    run_measured(argv, env, stdin)
    samples = [run_measured(argv, env, stdin) for _ in range(runs)]
    return Measured(statistics.median(s.seconds for s in samples),
                    int(statistics.median(s.rss_kib for s in samples)),
                    statistics.median(s.cpu_seconds for s in samples))


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def row(label: str, value: str, target: str = "", ratio: str = "") -> None:
    print(f"  {label:<42} {value:>12}  {ratio:>10}  {target}")


def percentile(samples: list[float], share: float) -> float:
    """Nearest-rank percentile, ``share`` from 0 to 1 (0.99: p99)."""
    ordered = sorted(samples)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


class Switches:
    """When the hardware's outputs switched (its ``output`` events, whoever asked), to time a
    path that ends at a pin: :meth:`arm` before the cause, then ``await`` :meth:`next`."""

    def __init__(self, hardware: Any):
        import asyncio

        self.at: list[float] = []
        self._changed = asyncio.Event()
        hardware.subscribe(self._seen)

    def _seen(self, event: Any) -> None:
        if event.kind == "output":
            self.at.append(time.perf_counter())
            self._changed.set()

    def arm(self) -> None:
        self._changed.clear()

    async def next(self, timeout: float = 10.0) -> float:
        """The time (``time.perf_counter``) of the next switch after :meth:`arm`."""
        import asyncio

        await asyncio.wait_for(self._changed.wait(), timeout)
        return self.at[-1]
