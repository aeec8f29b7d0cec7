"""Run every ``bench/bench_*.py`` module (or those named: ``python -m bench startup agent``), each
in its own interpreter so one bench's imports and memory never skew another's figures. The soak
(an hour) runs only when named: ``python -m bench soak``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ON_REQUEST = frozenset({"bench_soak"})
"""Too long for ``make bench``: run when named."""


def main(names: list[str]) -> int:
    here = Path(__file__).parent
    modules = sorted(p.stem for p in here.glob("bench_*.py"))
    chosen = [m for m in modules if m.removeprefix("bench_") in names or m in names
              or (not names and m not in ON_REQUEST)]
    failed = 0
    for name in chosen:
        print(f"\n== {name} ==", flush=True)
        code = f"import bench.{name} as b; b.main()"
        failed += subprocess.run([sys.executable, "-c", code], cwd=here.parent).returncode != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
