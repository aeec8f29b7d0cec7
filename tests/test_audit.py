"""The audit trail: every outcome at the door to the pins (actuations, refusals, auto-offs, the
safe state) is a row in ``<state>/audit.db`` with who, through which door and why, committed
before the requester is told; a ``kill -9`` in a burst loses none that was reported."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import stat
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from edge.audit import AuditTrail, read_history
from edge.config.loader import load_config
from edge.core.actuation import Actuation
from edge.core.exc import PolicyDenied
from edge.core.requester import Requester
from edge.hardware import Hardware, build_hardware
from edge.tools.gpio import GpioWriteTool
from tests.helpers import cli, start_agent

PINS = """
[security]
max_actuations_per_minute = 6000
[boards.gpio.aliases]
pump = "GPIO22"
[boards.gpio.pins]
pump = { mode = "output", safe = "off", max_on_seconds = 0.2, max_switches_per_minute = 6000 }
GPIO23 = { mode = "output", safe = "on" }
GPIO27 = { mode = "input" }
"""


class Kept:
    """A recorder that keeps what it is told, in order."""

    def __init__(self) -> None:
        self.seen: list[Actuation] = []

    async def record(self, actuation: Actuation) -> None:
        self.seen.append(actuation)


def hardware_for(text: str, write_config: Callable[[str], Path], env: dict[str, str],
                 mock_factory: object, resident: bool = True) -> Hardware:
    cfg = load_config(str(write_config(text)), env=env).config
    return build_hardware(cfg, resident=resident, pin_factory=mock_factory)


async def test_every_outcome_at_the_door_is_recorded_with_who_door_and_why(
        write_config: Callable[[str], Path], isolated_env: dict[str, str],
        mock_factory: object) -> None:
    hw = hardware_for(PINS, write_config, isolated_env, mock_factory)
    kept = Kept()
    hw.add_recorder(kept)
    await hw.start()
    asker = Requester("telegram", "42", "42", why="turn 7")
    await hw.write("pump", True, asker)
    with pytest.raises(PolicyDenied):
        await hw.write("GPIO27", True, Requester("schedule", "lamp"))
    await asyncio.sleep(0.35)  # pump's max_on_seconds
    await hw.make_safe("GPIO23", Requester("rule", "cold"))
    await hw.shutdown()

    on, refused, auto_off, safe, *shutdown = kept.seen
    assert (on.label, on.action, on.asked, on.read_back, on.outcome) == ("pump", "write", 1.0, 1.0, "ok")
    assert (on.caller, on.door, on.why) == ("telegram:42", "telegram", "turn 7")
    assert (refused.pin, refused.outcome, refused.door, refused.why) == \
        ("GPIO27", "refused", "schedule", "lamp")
    assert "input" in refused.reason
    assert (auto_off.label, auto_off.action, auto_off.read_back, auto_off.caller) == \
        ("pump", "auto-off", 0.0, "agent")
    assert (safe.pin, safe.action, safe.read_back, safe.why) == ("GPIO23", "safe", 1.0, "cold")
    assert {(s.pin, s.action, s.outcome) for s in shutdown} == \
        {("GPIO22", "safe-state", "ok"), ("GPIO23", "safe-state", "ok")}


async def test_the_read_back_is_what_the_board_says_not_what_was_asked(
        write_config: Callable[[str], Path], isolated_env: dict[str, str],
        mock_factory: object) -> None:
    hw = hardware_for(PINS, write_config, isolated_env, mock_factory)
    kept = Kept()
    hw.add_recorder(kept)
    await hw.start()
    board = hw.boards["gpio"]
    real_write = board.write

    async def stuck(pin: str, value: bool) -> None:  # a relay welded off
        await real_write(pin, False)
    board.write = stuck  # type: ignore[method-assign]
    await hw.write("pump", True, Requester("cli", "pi"))
    assert (kept.seen[-1].asked, kept.seen[-1].read_back) == (1.0, 0.0)
    assert kept.seen[-1].receipt() == "pump: on (read back off)"
    result = await GpioWriteTool(hw).execute({"pin": "pump", "value": "on"}, Requester("cli", "pi"))
    assert result.data is not None and result.data["value"] == 0.0  # what was read, not asked
    assert "but the board reads back off" in result.output
    await hw.shutdown()


async def test_the_store_is_private_and_returns_after_the_commit(tmp_path: Path) -> None:
    path = tmp_path / "state" / "audit.db"
    trail = AuditTrail(path)
    await asyncio.gather(*(trail.record(Actuation(
        at=time.time(), board="gpio", pin="GPIO17", label="led", action="write", asked=float(i % 2),
        read_back=float(i % 2), caller="cli:pi", door="cli", why=f"burst {i}")) for i in range(20)))
    with sqlite3.connect(path) as db:  # another connection sees every row: they are committed
        assert db.execute("SELECT count(*) FROM actuations").fetchone() == (20,)
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [a.why for a in read_history(path, "led", who="cli")][-1] == "burst 19"
    trail.close()


async def test_old_records_go_after_keep_days_and_the_oldest_beyond_the_size_cap(tmp_path: Path) -> None:
    path = tmp_path / "audit.db"
    day = 86400.0
    now = time.time()
    trail = AuditTrail(path, keep_days=10)

    def at(moment: float, why: str = "") -> Actuation:
        return Actuation(at=moment, board="gpio", pin="GPIO17", label="led", action="write",
                         asked=1.0, why=why)
    await trail.record(at(now - 2 * day, "recent"))
    await trail.record(at(now - 11 * day, "old"))
    trail.prune(now)
    assert [a.why for a in read_history(path)] == ["recent"]

    capped = AuditTrail(tmp_path / "capped.db", max_megabytes=0.05)
    for i in range(400):
        await capped.record(at(now, "x" * 200 + str(i)))
    capped.prune(now)
    kept = read_history(tmp_path / "capped.db", limit=1000)
    assert 0 < len(kept) < 400 and kept[-1].why.endswith("399")  # the newest stay
    trail.close()
    capped.close()


def test_kill_9_in_a_burst_loses_no_reported_actuation(
        isolated_env: dict[str, str], write_config: Callable[[str], Path]) -> None:
    """A real agent switched by ``edge-cli gpio write`` over its control socket, again and again
    from two loops, is killed mid-burst: every write an ``edge-cli`` reported done is a row."""
    env = {**isolated_env, "EDGE_CONFIG": str(write_config(PINS))}
    proc = start_agent(env)
    reported: list[str] = []
    stop = threading.Event()

    def burst(loop: int) -> None:
        i = 0
        while not stop.is_set():
            value = "on" if i % 2 else "off"
            out = cli("gpio", "write", "pump", value, env=env)
            if out.returncode == 0:
                reported.append(value)
            i += 1

    loops = [threading.Thread(target=burst, args=(n,)) for n in range(2)]
    try:
        for loop in loops:
            loop.start()
        deadline = time.monotonic() + 60
        while len(reported) < 8 and time.monotonic() < deadline:
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=20)
    finally:
        stop.set()
        for loop in loops:
            loop.join(timeout=60)
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=20)
    path = Path(env["EDGE_STATE_DIR"]) / "audit.db"
    rows = [a for a in read_history(path, "pump", limit=10_000)
            if a.action == "write" and a.outcome == "ok"]
    assert len(reported) >= 8
    assert all(a.door == "local" for a in rows)
    assert len(rows) >= len(reported), f"reported {len(reported)}, recorded {len(rows)}"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert os.path.exists(path)


async def test_on_the_emulated_uno_the_read_back_comes_from_the_firmware(
        simavr_uno: Any, write_config: Callable[[str], Path], isolated_env: dict[str, str]) -> None:
    """Firmata's pin state query answers for the board: a write the firmware never received
    reads back as the level the pin really has."""
    hw = hardware_for(f"""
[boards.uno]
type = "arduino"
port = "{simavr_uno.link}"
[boards.uno.pins]
D13 = {{ mode = "output", safe = "off" }}
""", write_config, isolated_env, None)
    kept = Kept()
    hw.add_recorder(kept)
    await hw.start()
    try:
        await hw.write("D13", True, Requester("cli", "pi"))
        assert (kept.seen[-1].asked, kept.seen[-1].read_back) == (1.0, 1.0)
        board = hw.boards["uno"]

        async def lost(pin: str, value: bool) -> None:  # the driver believes it; the wire lost it
            board._values[pin] = float(value)  # type: ignore[attr-defined]
        board.write = lost  # type: ignore[method-assign]
        await hw.write("D13", False, Requester("cli", "pi"))
        assert (kept.seen[-1].asked, kept.seen[-1].read_back) == (0.0, 1.0)
        assert kept.seen[-1].receipt() == "D13: off (read back on)"
    finally:
        await hw.shutdown()


WATERING = """
[boards.gpio.aliases]
led = "GPIO17"
pump = "GPIO22"
[boards.gpio.pins]
led = { mode = "output", safe = "off" }
pump = { mode = "output", safe = "off", max_on_seconds = 60 }
[[schedules]]
name = "water"
cron = "0 6 * * *"
timezone = "Europe/Berlin"
action = "gpio write pump on for 0.3s"
"""


async def test_the_running_agent_records_schedules_chat_commands_and_its_safe_state(
        start_agent: Any, mock_factory: Any, isolated_env: dict[str, str]) -> None:
    """Each door of a real Runtime lands in <state>/audit.db with who, door and why."""
    from datetime import datetime, timedelta
    from zoneinfo import ZoneInfo

    from edge.automation.clock import ManualClock
    from tests.helpers import msg, until

    clock = ManualClock(datetime(2026, 11, 24, 5, 59, 59, tzinfo=ZoneInfo("Europe/Berlin")))
    agent = await start_agent(WATERING, clock=clock)
    await clock.advance(timedelta(seconds=1))
    await until(lambda: mock_factory.pin(22).state == 1)
    await until(lambda: any(t.get_name() == "hold-gpio:GPIO22" for t in asyncio.all_tasks()))
    await clock.settle()
    await clock.advance(timedelta(seconds=1))  # the hold ends on the agent's clock
    await until(lambda: mock_factory.pin(22).state == 0)
    command = msg("/gpio led on", sender="alice")
    assert await agent.runtime.agent.command(command) is not None
    refused = msg("/gpio GPIO5 on", sender="alice")
    assert "allowlist" in (await agent.runtime.agent.command(refused) or "")
    await agent.stop()

    rows = read_history(Path(isolated_env["EDGE_STATE_DIR"]) / "audit.db", limit=100)
    seen = [(a.label, a.action, a.asked, a.outcome, a.caller, a.door, a.why) for a in rows]
    assert seen[:4] == [
        ("pump", "write", 1.0, "ok", "schedule:water", "schedule", "water"),
        ("pump", "write", 0.0, "ok", "schedule:water", "schedule", "water"),
        ("led", "write", 1.0, "ok", "cli:alice", "cli", f"message {command.id}"),
        ("GPIO5", "write", 1.0, "refused", "cli:alice", "cli", f"message {refused.id}"),
    ]
    assert {(label, action, caller) for label, action, _, _, caller, _, _ in seen[4:]} == \
        {("led", "safe-state", "agent"), ("pump", "safe-state", "agent")}
