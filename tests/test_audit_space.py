"""What the audit trail keeps under a flood: ``[audit] max_megabytes`` holds at every group
commit (the database and its write-ahead log together), refusals go first and the actuations,
trips and safe states stay; a caller's repeated refusal is one row with a count; an older file
gains the new columns and reads as before."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from edge.audit import AuditTrail, history_text, read_history
from edge.audit_space import MIB
from edge.config.loader import load_config
from edge.core.actuation import Actuation
from edge.core.exc import PolicyDenied
from edge.core.requester import Requester
from edge.hardware import build_hardware

PINS = """
[security]
max_actuations_per_minute = 6000
[boards.gpio.aliases]
pump = "GPIO22"
[boards.gpio.pins]
pump = { mode = "output", safe = "off", max_switches_per_minute = 6000 }
"""
MARGIN = 256 * 1024
"""Over the cap by at most one group commit and the log's last frames: a stated bound."""


def on_disk(path: Path) -> int:
    wal = path.with_name(path.name + "-wal")
    return path.stat().st_size + (wal.stat().st_size if wal.exists() else 0)


async def test_a_flood_of_refusals_through_the_door_keeps_the_cap_and_every_actuation(
        tmp_path: Path, write_config: Callable[[str], Path], isolated_env: dict[str, str],
        mock_factory: object) -> None:
    """Many callers ask for pins that are not allowlisted (each a row of its own), between real
    switches of the pump: after every burst the file stays under 1 MB plus a group commit, and
    every switch of the pump is still there."""
    hw = build_hardware(load_config(str(write_config(PINS)), env=isolated_env).config,
                        resident=True, pin_factory=mock_factory)
    path = tmp_path / "audit.db"
    trail = AuditTrail(path, max_megabytes=1)
    hw.add_recorder(trail)
    await hw.start()
    owner = Requester("telegram", "42", why="turn")
    largest = 0
    switches = 40
    for burst in range(switches):
        await hw.write("pump", burst % 2 == 0, owner)

        async def refused(i: int, burst: int = burst) -> None:
            with pytest.raises(PolicyDenied):
                await hw.write(f"GPIO{5 + i % 10}", True,
                               Requester("mqtt", f"anonymous-{burst}-{i}", why="x" * 40))
        await asyncio.gather(*(refused(i) for i in range(150)))
        largest = max(largest, on_disk(path))
    await hw.shutdown()
    trail.close()
    assert largest <= MIB + MARGIN, f"{largest} bytes on disk with a 1 MiB cap"
    kept = read_history(path, limit=100_000)
    pump = [a for a in kept if a.label == "pump" and a.action == "write"]
    assert len(pump) == switches  # not one switch pushed out by the refusals
    refusals = [a for a in kept if a.outcome == "refused"]
    assert 0 < len(refusals) < switches * 150  # the oldest refusals went
    assert refusals[-1].caller == f"mqtt:anonymous-{switches - 1}-149"  # the newest stayed


async def test_a_callers_repeated_refusal_is_one_row_with_a_count(tmp_path: Path) -> None:
    path = tmp_path / "audit.db"
    trail = AuditTrail(path)
    start = time.time()

    def refusal(at: float, caller: str = "mqtt:anon") -> Actuation:
        return Actuation(at=at, board="gpio", pin="GPIO5", label="GPIO5", action="write",
                         asked=1.0, outcome="refused", reason="GPIO5 is not in the allowlist",
                         caller=caller, door="mqtt", why="chat")
    for i in range(500):
        await trail.record(refusal(start + i * 0.01))
    await trail.record(refusal(start + 6, "mqtt:other"))  # someone else: a row of its own
    await trail.record(refusal(start + 7))  # the caller's last row is still the same refusal
    await trail.record(refusal(start + 200))  # more than a minute after: a new row
    trail.close()
    rows = read_history(path)
    assert [(a.caller, a.count) for a in rows] == [("mqtt:anon", 501), ("mqtt:other", 1),
                                                    ("mqtt:anon", 1)]
    assert rows[0].first_at == pytest.approx(start) and rows[0].at == pytest.approx(start + 7)
    assert "×501 between" in history_text(rows)


async def test_refusals_go_before_actuations_trips_and_safe_states(tmp_path: Path) -> None:
    path = tmp_path / "audit.db"
    trail = AuditTrail(path, max_megabytes=0.25)
    now = time.time()
    kinds = ("write", "trip", "safe-state", "auto-off")
    for i in range(40):
        await trail.record(Actuation(at=now, board="gpio", pin="GPIO22", label="pump",
                                     action=kinds[i % 4], asked=1.0, read_back=1.0,
                                     caller="telegram:42", door="telegram", why=f"keep {i}"))
    for burst in range(30):  # a hundred callers at once: one group commit each burst
        await asyncio.gather(*(trail.record(Actuation(
            at=now, board="gpio", pin=f"GPIO{i}", label=f"GPIO{i}", action="write", asked=1.0,
            outcome="refused", reason="not in the allowlist " + "y" * 80,
            caller=f"mqtt:c{burst}-{i}", door="mqtt")) for i in range(100)))
    trail.close()
    kept = read_history(path, limit=100_000)
    assert [a.why for a in kept if a.outcome == "ok"] == [f"keep {i}" for i in range(40)]
    assert on_disk(path) <= 0.25 * MIB + MARGIN


async def test_an_older_trail_gains_the_new_columns_and_reads_as_before(tmp_path: Path) -> None:
    path = tmp_path / "audit.db"
    yesterday = time.time() - 86400
    with sqlite3.connect(path) as db:  # the first trail's schema, before detail and count
        db.execute("CREATE TABLE actuations (id INTEGER PRIMARY KEY, at REAL NOT NULL, board TEXT "
                   "NOT NULL, pin TEXT NOT NULL, label TEXT NOT NULL, action TEXT NOT NULL, asked "
                   "REAL, read_back REAL, outcome TEXT NOT NULL, reason TEXT NOT NULL, caller "
                   "TEXT NOT NULL, door TEXT NOT NULL, why TEXT NOT NULL)")
        db.execute("INSERT INTO actuations VALUES (1, ?, 'gpio', 'GPIO22', 'pump', 'write', "
                   "1, 1, 'ok', '', 'cli:pi', 'cli', 'pi')", (yesterday,))
    db.close()
    before = read_history(path)  # read-only: the missing columns read as their defaults
    assert [(a.label, a.count, a.first_at, a.detail) for a in before] == [("pump", 1, None, "")]
    trail = AuditTrail(path)
    await trail.record(Actuation(at=time.time(), board="gpio", pin="GPIO22", label="pump",
                                 action="write", asked=0.0, caller="cli:pi", door="cli"))
    trail.close()
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA auto_vacuum").fetchone() == (2,)  # rebuilt once, to shrink
    db.close()
    assert [(a.at, a.count) for a in read_history(path)][0] == (yesterday, 1)
    assert len(read_history(path)) == 2
