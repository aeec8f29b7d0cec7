"""Run every ``bench/bench_*.py`` module's ``main()`` (or only those named on the command line)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path


def main(names: list[str]) -> int:
    here = Path(__file__).parent
    modules = sorted(p.stem for p in here.glob("bench_*.py"))
    chosen = [m for m in modules if not names or m.removeprefix("bench_") in names or m in names]
    for name in chosen:
        print(f"\n== {name} ==", flush=True)
        importlib.import_module(f"bench.{name}").main()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
