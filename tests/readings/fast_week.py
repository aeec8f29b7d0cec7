"""The fast-clock week both the history's and the chart's tests read: a greenhouse thermometer read
every 30 s for a week on a :class:`ManualClock`, failing for three hours on the fourth night, kept
by the recorder in a real SQLite file as the agent keeps it (listener, supervised writer and
upkeep paced by the clock)."""

from __future__ import annotations

import contextlib
import math
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import NamedTuple

from edge.automation.clock import ManualClock
from edge.readings.recorder import ReadingRecorder
from edge.readings.store import ReadingStore
from edge.sensors import SensorHub, SensorState
from peripherals.sensors.base import Reading
from tests.helpers import until

START = datetime(2026, 11, 2, 0, 0, tzinfo=UTC)
INTERVAL = 30.0
WEEK = 7 * 86400.0
FAILING = (START + timedelta(days=3, hours=2), START + timedelta(days=3, hours=5))
"""Three hours on the fourth night when the sensor does not answer."""
FLUSH_SECONDS = 15.0
"""The writer's pace here (the agent's is 5 s): twice per reading, fewer wake-ups to settle."""


class GreenhouseThermometer:
    """A sensor whose temperature follows the sun (15 °C at night, 35 °C at 14:00) and which
    fails to read while ``FAILING``; a real object behind the hub's Measure protocol."""

    units = present = {"temperature": "°C"}

    def __init__(self, clock: ManualClock) -> None:
        self.clock = clock
        self.taken: list[tuple[float, float | None]] = []

    @staticmethod
    def temperature(at: float) -> float:
        hour = (at % 86400) / 3600
        return round(25 + 10 * math.sin((hour - 8) / 24 * 2 * math.pi), 3)

    async def measure(self) -> dict[str, Reading]:
        now = self.clock.now()
        if FAILING[0] <= now < FAILING[1]:
            self.taken.append((now.timestamp(), None))
            raise OSError("no answer on the 1-Wire bus")
        value = self.temperature(now.timestamp())
        self.taken.append((now.timestamp(), value))
        return {"temperature": Reading("temperature", value, "°C")}

    def describe(self) -> str:
        return "a greenhouse thermometer"

    def close(self) -> None:
        return None


class Week(NamedTuple):
    clock: ManualClock
    sensor: GreenhouseThermometer
    recorder: ReadingRecorder
    """Still running: the caller closes it (``aclose``)."""
    store: ReadingStore


async def record_week(state_dir: Path) -> Week:
    """The week, recorded into ``state_dir``'s history; returns once every reading is written
    or pending."""
    clock = ManualClock(START)
    now = lambda: clock.now().timestamp()  # noqa: E731
    sensor = GreenhouseThermometer(clock)
    hub = SensorHub([SensorState("greenhouse", "ds18b20", sensor, INTERVAL)], clock=now)
    store = ReadingStore.in_state_dir(state_dir, clock=now)
    recorder = ReadingRecorder(store, hub, clock=clock, flush_seconds=FLUSH_SECONDS,
                               upkeep_seconds=600.0)
    recorder.start()
    for _ in range(int(WEEK / INTERVAL)):
        await clock.advance(timedelta(seconds=INTERVAL))
        with contextlib.suppress(OSError):
            await hub.measure("greenhouse")
    await until(lambda: recorder.written + recorder.pending == len(sensor.taken), timeout=30)
    return Week(clock, sensor, recorder, store)
