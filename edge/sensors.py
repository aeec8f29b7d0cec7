"""The sensors the agent reads, as one object beside :class:`~edge.hardware.Hardware`: each is
polled every ``interval_seconds`` in a thread (drivers block), its last readings kept for status,
tools and chat, and every reading handed to listeners (rules, MQTT, the sensor history) on the
event loop; every failed read goes to the failure listeners (the history keeps it as a gap).

A sensor that fails keeps its last good readings (marked with their age) and its error; the
heartbeat reports it once it has been failing longer than its threshold. Each sensor is polled by
a supervised task (``sensor-NAME``): a read that fails is the sensor's failure, tried again at
the next interval; anything else (a driver's bug) ends the polling with its traceback in the log,
and it starts again after a backoff. Analog pins of Arduino
and STM32 boards are sensors too: they are read through the hardware's one door (the policy
allows reads of allowlisted pins) as caller ``sensor:NAME``, and scaled (``0.42`` -> ``21.3 °C``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Protocol

from edge.core.exc import EdgeError, UsageError
from edge.core.requester import Requester
from edge.core.supervision import SupervisedTask, close_all
from edge.status import readings_text
from edge.status_lines import ago
from peripherals.exc import BoardError
from peripherals.sensors.base import Reading, Scaling, Sensor

log = logging.getLogger(__name__)

ReadingListener = Callable[[str, Reading], None]
FailureListener = Callable[[str, str], None]
"""Called with the sensor's name and why, at each read that fails (the history's gaps)."""


class Measure(Protocol):
    """How the hub takes one sensor's readings (a driver in a thread, or a board's pin)."""

    @property
    def units(self) -> Mapping[str, str]: ...

    @property
    def present(self) -> Mapping[str, str]: ...

    async def measure(self) -> dict[str, Reading]: ...

    def describe(self) -> str: ...

    def close(self) -> None: ...


class DriverMeasure:
    """A blocking driver from :mod:`peripherals.sensors`, read in a thread."""

    def __init__(self, sensor: Sensor):
        self.sensor = sensor
        self.units = sensor.units
        self.present = sensor.present

    async def measure(self) -> dict[str, Reading]:
        return await asyncio.to_thread(self.sensor.read)

    def describe(self) -> str:
        return self.sensor.describe()

    def close(self) -> None:
        self.sensor.close()


class SimulatedMeasure:
    """A sensor in memory (``simulate = true``): each quantity reads what :meth:`hold` set, until
    it is released; nothing is read from a device."""

    def __init__(self, units: Mapping[str, str]):
        self.units = self.present = dict(units)
        self.held: dict[str, float] = {}

    def hold(self, quantity: str, value: float | None) -> None:
        if quantity not in self.units:
            raise UsageError(f"the sensor yields {', '.join(self.units)}, not {quantity!r}")
        if value is None:
            self.held.pop(quantity, None)
        else:
            self.held[quantity] = value

    async def measure(self) -> dict[str, Reading]:
        return {q: Reading(q, v, self.units[q]) for q, v in self.held.items()}

    def describe(self) -> str:
        return "simulated (simulate = true in config)"

    def close(self) -> None:
        return None


class PinReader(Protocol):
    async def read(self, spec: str, requester: Requester) -> tuple[Any, float]: ...


class AnalogPinMeasure:
    """An analog pin of a microcontroller board (``uno:A0``): 0..1 of the reference, scaled."""

    def __init__(self, name: str, hardware: PinReader, pin: str, scaling: Scaling):
        self.hardware, self.pin, self.scaling = hardware, pin, scaling
        self.requester = Requester("sensor", name)
        self.units = self.present = {scaling.quantity: scaling.unit}

    async def measure(self) -> dict[str, Reading]:
        _, raw = await self.hardware.read(self.pin, self.requester)
        return {self.scaling.quantity: self.scaling.reading(raw)}

    def describe(self) -> str:
        return f"analog pin {self.pin}"

    def close(self) -> None:
        return None


@dataclass
class SensorState:
    name: str
    kind: str
    source: Measure
    interval: float
    readings: dict[str, Reading] = field(default_factory=dict)
    read_at: float | None = None
    """When the readings were taken (epoch seconds)."""
    error: str | None = None
    failing_since: float | None = None
    lock: asyncio.Lock = field(default_factory=asyncio.Lock, repr=False)


class SensorHub:
    def __init__(self, sensors: list[SensorState], *, clock: Callable[[], float] = time.time):
        self.sensors = {s.name: s for s in sensors}
        self.clock = clock
        self._listeners: list[ReadingListener] = []
        self._failure_listeners: list[FailureListener] = []
        self._tasks: list[SupervisedTask] = []

    # what MQTT, rules and tools see -----------------------------------------------------------

    def describe(self, *, present: bool = False) -> dict[str, dict[str, str]]:
        """Sensor -> quantity -> unit, known before the first reading: every quantity each
        sensor's type yields (what rules are checked against), or with ``present`` only those
        this machine has sources for (what is announced)."""
        return {name: dict(s.source.present if present else s.source.units)
                for name, s in self.sensors.items()}

    def latest(self) -> dict[str, dict[str, Reading]]:
        return {name: dict(s.readings) for name, s in self.sensors.items() if s.readings}

    def pins_read(self) -> frozenset[str]:
        """The board pins (``uno:A0``) that ``[sensors.NAME]`` sections read, scaled."""
        return frozenset(s.source.pin for s in self.sensors.values()
                         if isinstance(s.source, AnalogPinMeasure))

    def subscribe(self, listener: ReadingListener) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def subscribe_failures(self, listener: FailureListener) -> Callable[[], None]:
        """``listener(name, error)`` at every failed read (the sensor history records them)."""
        self._failure_listeners.append(listener)
        return lambda: (self._failure_listeners.remove(listener)
                        if listener in self._failure_listeners else None)

    async def measure(self, name: str) -> dict[str, Reading]:
        """Read ``name`` now (not waiting for its interval); raises on failure after recording
        it. Two reads of one sensor never overlap: a second caller waits for the first."""
        state = self.sensors.get(name)
        if state is None:
            known = ", ".join(self.sensors) or "none configured"
            raise EdgeError(f"no sensor {name!r} (sensors: {known}); add a [sensors.{name}] "
                            "section to the config")
        async with state.lock:
            try:
                readings = await state.source.measure()
            except (BoardError, EdgeError, OSError) as exc:
                self._failed(state, exc)
                raise
            state.readings.update(readings)
            state.read_at = self.clock()
            if state.error is not None:
                log.info("sensor_recovered sensor=%s", name)
            state.error, state.failing_since = None, None
        for reading in readings.values():
            for listener in list(self._listeners):
                try:
                    listener(name, reading)
                except Exception:  # one bad listener must not silence the others
                    log.exception("sensor_listener_failed sensor=%s", name)
        return readings

    async def simulate(self, name: str, quantity: str, value: float | None) -> dict[str, Reading]:
        """Hold ``name``'s ``quantity`` at ``value`` (None: release it) and read the sensor now,
        so rules, MQTT and the history see it as a reading; a sensor that reads a device
        refuses (UsageError: exit 2)."""
        state = self.sensors.get(name)
        source = state.source if state is not None else None
        if state is not None and not isinstance(source, SimulatedMeasure):
            raise UsageError(f"sensor {name} reads a real device; set [sensors.{name}] simulate = "
                             "true (or `edge-cli run --simulate`) to try readings by hand")
        if isinstance(source, SimulatedMeasure):
            source.hold(quantity, value)
            if value is None and state is not None:
                state.readings.pop(quantity, None)
        log.info("sensor_simulated sensor=%s quantity=%s value=%s", name, quantity,
                 "released" if value is None else value)
        return await self.measure(name)

    async def read_now(self, name: str) -> str:
        readings = await self.measure(name)
        return f"{name}: " + ", ".join(f"{q} {r}" for q, r in readings.items())

    def _failed(self, state: SensorState, exc: Exception) -> None:
        if state.error != str(exc):
            log.warning("sensor_read_failed sensor=%s error=%r", state.name, str(exc))
        state.error = str(exc)
        if state.failing_since is None:
            state.failing_since = self.clock()
        for listener in list(self._failure_listeners):
            try:
                listener(state.name, state.error)
            except Exception:
                log.exception("sensor_listener_failed sensor=%s", state.name)

    def down(self) -> dict[str, str]:
        """Failing sensors and why (the heartbeat's view)."""
        return {f"sensor {n}": s.error for n, s in self.sensors.items() if s.error is not None}

    def rows(self) -> list[dict[str, Any]]:
        """Each sensor for ``edge-cli sensors``, ``/sensors`` and status."""
        now = self.clock()
        return [{"name": s.name, "kind": s.kind, "where": s.source.describe(),
                 "interval_seconds": s.interval,
                 "readings": {q: {"value": r.value, "unit": r.unit} for q, r in s.readings.items()},
                 "age_seconds": None if s.read_at is None else round(now - s.read_at, 1),
                 "error": s.error,
                 "failing_since": s.failing_since}
                for s in self.sensors.values()]

    # running ----------------------------------------------------------------------------------

    def start(self) -> None:
        for state in self.sensors.values():
            self._tasks.append(SupervisedTask(f"sensor-{state.name}", partial(self._poll, state)).start())

    def supervised_tasks(self) -> list[SupervisedTask]:
        """Each sensor's polling (``sensor-NAME``), once started."""
        return list(self._tasks)

    async def _poll(self, state: SensorState) -> None:
        while True:
            # a failure is recorded; the next round tries again (a bug ends this: it is supervised)
            with contextlib.suppress(BoardError, EdgeError, OSError):
                await self.measure(state.name)
            await asyncio.sleep(state.interval)

    async def aclose(self) -> None:
        await close_all(self._tasks)
        self._tasks.clear()
        for state in self.sensors.values():
            try:
                state.source.close()
            except Exception as exc:
                log.warning("sensor_close_failed sensor=%s error=%r", state.name, str(exc))


def format_rows(rows: list[dict[str, Any]]) -> str:
    """The sensors as lines of text (``/sensors``, ``edge-cli sensors``)."""
    if not rows:
        return "No sensors configured (add [sensors.NAME] sections)."
    lines = []
    for row in rows:
        values = readings_text(row["readings"])
        age = f" ({ago(row['age_seconds'])})" if row["age_seconds"] is not None else ""
        error = f"  FAILING: {row['error']}" if row["error"] else ""
        lines.append(f"{row['name']} ({row['where']}): {values}{age}{error}")
    return "\n".join(lines)
