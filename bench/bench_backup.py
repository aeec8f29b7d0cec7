"""``edge-cli backup create`` and ``backup verify`` on a state directory the size of months of
use: ``readings.db`` of about 40 MB (a sensor's five quantities every 10 s for ~60 days), an
``audit.db`` of about 10 MB, a ``memory/brain.db`` of a few MB. Each command runs in its own
process; figures: wall time, peak RSS, archive size. Sealed (``--passphrase-file``), scrypt's
32 MB and one 1 MiB chunk at a time are added (:mod:`edge.backup.sealing`).

No target is set by the issue; the figure to watch is sealed peak RSS on a 512 MB Pi (Zero 2 W).
Measured (x86_64, 2 shared cores, 66.9 MB of state): create 6-11 s, 43 MB peak, a 25.5 MB archive;
verify 1 s, 24 MB. Sealed: create 79 MB peak, verify 60 MB; with the whole archive sealed in
memory at once (Fernet over all of it, the first version) they were 233 MB and 215 MB."""

from __future__ import annotations

import os
import random
import sqlite3
import sys
import tempfile
from pathlib import Path

from bench.process import row, run_measured

READINGS_ROWS = 2_600_000
AUDIT_ROWS = 60_000
MEMORIES = 3_000


def fill(state: Path) -> None:
    rng = random.Random(42)
    (state / "memory").mkdir(parents=True)
    db = sqlite3.connect(state / "readings.db")
    db.execute("CREATE TABLE raw (series INTEGER, at REAL, value REAL)")
    db.executemany("INSERT INTO raw VALUES (?, ?, ?)",
                   ((i % 5, 1.79e9 + i * 2.0, round(rng.uniform(0, 40), 2)) for i in range(READINGS_ROWS)))
    db.commit()
    db.close()
    db = sqlite3.connect(state / "audit.db")
    db.execute("CREATE TABLE actuations (at REAL, pin TEXT, value REAL, who TEXT, why TEXT)")
    db.executemany("INSERT INTO actuations VALUES (?, ?, ?, ?, ?)",
                   ((1.79e9 + i * 60.0, "pump", i % 2, "schedule:water", "rule dry soil " * 5)
                    for i in range(AUDIT_ROWS)))
    db.commit()
    db.close()
    db = sqlite3.connect(state / "memory" / "brain.db")
    db.execute("CREATE TABLE memories (key TEXT, content TEXT)")
    db.executemany("INSERT INTO memories VALUES (?, ?)",
                   ((f"k{i}", " ".join(rng.choice(["pump", "fan", "dawn", "soil", "tank"]) for _ in range(60)))
                    for i in range(MEMORIES)))
    db.commit()
    db.close()


def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        base = Path(scratch)
        state = base / "state"
        fill(state)
        config = base / "config.toml"
        config.write_text("[agent]\n")
        phrase = base / "phrase"
        phrase.write_text("correct horse battery staple\n")
        size = sum(p.stat().st_size for p in state.rglob("*") if p.is_file())
        env = {**os.environ, "EDGE_STATE_DIR": str(state), "EDGE_CONFIG": str(config)}
        cli = [sys.executable, "-m", "edge"]
        print(f"backup of a state directory of {size / 1e6:.1f} MB (readings, audit, memory)")
        for label, extra, name in (("create", [], "plain.tar.gz"),
                                   ("create, sealed", ["--passphrase-file", str(phrase)], "sealed.tar.gz")):
            wall, rss, _ = run_measured([*cli, "backup", "create", str(base / name), *extra], env)
            archive = (base / name).stat().st_size
            row(f"{label}: wall", f"{wall:.2f} s")
            row(f"{label}: peak RSS", f"{rss / 1024:.1f} MB")
            row(f"{label}: archive", f"{archive / 1e6:.1f} MB", ratio=f"{archive / size:.0%}")
            wall, rss, _ = run_measured([*cli, "backup", "verify", str(base / name), *extra], env)
            row(f"verify ({label}): wall", f"{wall:.2f} s")
            row(f"verify ({label}): peak RSS", f"{rss / 1024:.1f} MB")


if __name__ == "__main__":
    main()
