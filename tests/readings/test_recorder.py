"""The recorder hears the hub and keeps off the path of rules: its listener only appends to a
bounded buffer; a write that fails keeps the readings for the next round (the writer is
supervised and starts again); stopping writes what is buffered."""

from __future__ import annotations

import asyncio
import itertools
import os
import sqlite3
import stat
import time
from pathlib import Path

import pytest

from edge.readings.recorder import ReadingRecorder
from edge.readings.store import ReadingStore
from edge.sensors import AnalogPinMeasure, SensorHub, SensorState
from peripherals.exc import BoardError
from peripherals.sensors.base import Reading, Scaling
from tests.helpers import until


class Dial:
    """A sensor reading whatever the test sets, or failing with ``error``."""

    units = present = {"level": "%", "voltage": "V"}

    def __init__(self) -> None:
        self.value = 1.0
        self.error: str | None = None

    async def measure(self) -> dict[str, Reading]:
        if self.error:
            raise OSError(self.error)
        return {"level": Reading("level", self.value, "%"),
                "voltage": Reading("voltage", self.value / 10, "V")}

    def describe(self) -> str:
        return "a dial"

    def close(self) -> None:
        return None


def hub_with(dial: Dial, interval: float = 3600.0) -> SensorHub:
    """A hub whose clock moves 10 s each time it is read (raw keeps one reading a second)."""
    ticks = itertools.count(time.time(), 10.0)
    return SensorHub([SensorState("tank", "dial", dial, interval)], clock=lambda: next(ticks))


async def test_every_reading_and_each_failure_of_each_quantity_is_kept(tmp_path: Path) -> None:
    dial = Dial()
    hub = hub_with(dial)
    recorder = ReadingRecorder(ReadingStore.in_state_dir(tmp_path), hub)
    recorder.listen()
    await hub.measure("tank")
    dial.error = "no answer"
    with pytest.raises(OSError):
        await hub.measure("tank")
    dial.error, dial.value = None, 3.0
    await hub.measure("tank")
    assert recorder.pending == 6  # two quantities, three reads
    await recorder.aclose()
    db = sqlite3.connect(tmp_path / "readings.db")
    rows = db.execute("SELECT q.quantity, r.value FROM raw r JOIN quantities q ON q.id = r.series "
                      "ORDER BY r.at, q.quantity").fetchall()
    assert rows == [("level", 1.0), ("voltage", 0.1), ("level", None), ("voltage", None),
                    ("level", 3.0), ("voltage", 0.3)]
    assert stat.S_IMODE(os.stat(tmp_path / "readings.db").st_mode) == 0o600


async def test_the_listener_costs_an_append_not_a_write(tmp_path: Path) -> None:
    recorder = ReadingRecorder(ReadingStore.in_state_dir(tmp_path), hub_with(Dial()))
    reading = Reading("level", 1.0, "%")
    started = time.perf_counter()
    for _ in range(10_000):
        recorder.reading("tank", reading)
    per_reading = (time.perf_counter() - started) / 10_000
    assert not (tmp_path / "readings.db").exists()  # nothing touched the disk
    assert per_reading < 50e-6, per_reading  # about a microsecond here
    await recorder.aclose()


async def test_the_buffer_is_bounded_and_keeps_the_newest(tmp_path: Path) -> None:
    recorder = ReadingRecorder(ReadingStore.in_state_dir(tmp_path), hub_with(Dial()),
                               buffer_limit=100)
    for i in range(250):
        recorder.reading("tank", Reading("level", float(i), "%"))
    assert (recorder.pending, recorder.dropped) == (100, 150)
    await recorder.aclose()
    values = [v for (v,) in sqlite3.connect(tmp_path / "readings.db").execute(
        "SELECT value FROM raw ORDER BY value")]
    assert values[0] == 150.0 and values[-1] == 249.0


async def test_a_failed_write_keeps_the_readings_and_the_writer_starts_again(
        tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    (state / "readings.db").mkdir()  # not a file: every write fails until it is moved away
    recorder = ReadingRecorder(ReadingStore.in_state_dir(state), hub_with(Dial()),
                               flush_seconds=0.05)
    recorder.reading("tank", Reading("level", 7.0, "%"))
    recorder.start()
    [writer] = [t for t in recorder.supervised_tasks() if t.name == "readings-writer"]
    writer.backoff_start = 0.05
    await until(lambda: writer.restarts >= 1, timeout=10)
    assert recorder.pending == 1 and writer.last_error is not None
    (state / "readings.db").rmdir()
    await until(lambda: recorder.written == 1, timeout=10)
    assert recorder.pending == 0
    await recorder.aclose()


async def test_stopping_writes_what_is_buffered_and_stops_listening(tmp_path: Path) -> None:
    dial = Dial()
    hub = hub_with(dial)
    recorder = ReadingRecorder(ReadingStore.in_state_dir(tmp_path), hub, flush_seconds=3600)
    recorder.start()
    await hub.measure("tank")
    await asyncio.sleep(0)
    assert recorder.pending == 2
    await recorder.aclose()
    await hub.measure("tank")  # heard by nobody now
    assert recorder.pending == 0 and recorder.written == 2
    assert sqlite3.connect(tmp_path / "readings.db").execute(
        "SELECT count(*) FROM raw").fetchone()[0] == 2


async def test_status_says_the_files_size_and_what_was_written(tmp_path: Path) -> None:
    hub = hub_with(Dial())
    recorder = ReadingRecorder(ReadingStore.in_state_dir(tmp_path), hub)
    recorder.listen()
    await hub.measure("tank")
    assert recorder.status() == {"file": str(tmp_path / "readings.db"), "bytes": 0,
                                 "written": 0, "pending": 2, "dropped": 0}
    await recorder.flush()
    status = recorder.status()
    assert status["written"] == 2 and status["pending"] == 0
    assert status["bytes"] == sum(p.stat().st_size for p in tmp_path.glob("readings.db*")
                                  if not p.name.endswith("-shm"))
    await recorder.aclose()


class Uno:
    """An analog pin's board: reads 0.42 of its reference, or fails while ``unplugged``."""

    def __init__(self) -> None:
        self.unplugged = False

    async def read(self, spec: str, requester: object) -> tuple[object, float]:
        if self.unplugged:
            raise BoardError(f"board uno is not connected (reading {spec})")
        return None, 0.42


async def test_an_analog_pin_read_as_a_sensor_is_kept_too(tmp_path: Path) -> None:
    uno = Uno()
    measure = AnalogPinMeasure("soil", uno, "uno:A0", Scaling(scale=100, quantity="moisture",
                                                               unit="%"))
    ticks = itertools.count(time.time(), 10.0)
    hub = SensorHub([SensorState("soil", "analog", measure, 60)], clock=lambda: next(ticks))
    recorder = ReadingRecorder(ReadingStore.in_state_dir(tmp_path), hub)
    recorder.listen()
    await hub.measure("soil")
    uno.unplugged = True
    with pytest.raises(BoardError):
        await hub.measure("soil")
    await recorder.aclose()
    rows = sqlite3.connect(tmp_path / "readings.db").execute(
        "SELECT q.sensor, q.quantity, q.unit, r.value FROM raw r JOIN quantities q "
        "ON q.id = r.series ORDER BY r.at").fetchall()
    assert rows == [("soil", "moisture", "%", 42.0), ("soil", "moisture", "%", None)]
