"""A pulse counter on a header pin: a flow meter's litres (a YF-S201 gives about 450 pulses a
litre) counted from the edges of its output, through a gpiozero input device.

Counting starts when the sensor is first read and goes on between reads (the pin's edges are
counted as they come, by the pin factory's edge detection). Each read yields ``water``, the
total in litres, and ``flow_rate``, the litres a minute since the read before:

>>> meter = PulseTally(pulses_per_litre=450.0)
>>> meter.pulses = 900
>>> meter.litres
2.0

The total survives a restart when ``state_file`` is set: the count is written there (atomically,
and only when it changed) at each read and when the sensor closes, and read back when it opens;
a power cut loses at most the pulses since the last read. Without it the total starts at 0 at
each start, which Home Assistant's ``total_increasing`` takes as a new meter cycle (its
statistics stay right; a rule on the total does not).
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import Field

from peripherals.exc import SensorError
from peripherals.sensors.base import Reading, Sensor, SensorContext, SensorOptions, SensorSpec
from peripherals.sensors.header import PinName, open_on_header

log = logging.getLogger(__name__)

UNITS = {"water": "L", "flow_rate": "L/min"}


@dataclass
class PulseTally:
    """Pulses counted so far, and what they are in litres."""

    pulses_per_litre: float
    pulses: int = 0

    @property
    def litres(self) -> float:
        return round(self.pulses / self.pulses_per_litre, 3)


class PulseCounterSensor(Sensor):
    """Pulses on ``pin`` (gpiozero's name, ``GPIO17``), ``pulses_per_litre`` of them a litre;
    ``state_file`` keeps the count over restarts. ``clock`` gives the time in seconds (the
    monotonic clock unless a test gives its own)."""

    kind = "pulse_counter"

    def __init__(self, name: str, *, pin: str, pulses_per_litre: float, pull_up: bool = True,
                 state_file: str | Path | None = None, pin_factory: Any = None,
                 clock: Callable[[], float] = time.monotonic):
        self.name, self.pin, self.pull_up, self.pin_factory = name, pin, pull_up, pin_factory
        self.state_file = Path(state_file) if state_file is not None else None
        self.units = dict(UNITS)
        self.tally = PulseTally(pulses_per_litre)
        self._clock = clock
        self._lock = threading.Lock()
        self._device: Any = None
        self._since: tuple[int, float] = (0, 0.0)
        self._saved: int | None = None

    def describe(self) -> str:
        return f"pulse_counter on {self.pin}"

    def read(self) -> dict[str, Reading]:
        if self._device is None:
            self._open()
        now = self._clock()
        with self._lock:
            pulses = self.tally.pulses
            litres = self.tally.litres
        before, then = self._since
        self._since = (pulses, now)
        minutes = (now - then) / 60.0
        rate = (pulses - before) / self.tally.pulses_per_litre / minutes if minutes > 0 else 0.0
        self._save(pulses)
        return {"water": Reading("water", litres, "L"),
                "flow_rate": Reading("flow_rate", round(rate, 3), "L/min")}

    def _pulse(self) -> None:
        with self._lock:
            self.tally.pulses += 1

    def _open(self) -> None:
        with self._lock:
            self.tally.pulses = self._load()
            self._saved = self.tally.pulses
        self._since = (self.tally.pulses, self._clock())
        self._device = open_on_header(self._input, "the pulse counter", self.pin)
        self._device.when_activated = self._pulse
        log.info("sensor_opened sensor=%s kind=pulse_counter pin=%s pulses=%d", self.name,
                 self.pin, self.tally.pulses)

    def _input(self) -> Any:
        from gpiozero import DigitalInputDevice  # gpiozero: imported where the pin is opened

        return DigitalInputDevice(self.pin, pull_up=self.pull_up, pin_factory=self.pin_factory)

    def _load(self) -> int:
        if self.state_file is None or not self.state_file.exists():
            return 0
        try:
            return int(self.state_file.read_text().split()[0])
        except (OSError, ValueError, IndexError) as exc:
            raise SensorError(f"cannot read the pulse count from {self.state_file} ({exc}): fix "
                              "or remove the file (removing it starts the total at 0)") from None

    def _save(self, pulses: int) -> None:
        if self.state_file is None or pulses == self._saved:
            return
        temporary = self.state_file.with_name(f".{self.state_file.name}.tmp")
        try:
            self.state_file.parent.mkdir(parents=True, exist_ok=True)
            temporary.write_text(f"{pulses}\n")
            os.replace(temporary, self.state_file)
        except OSError as exc:
            log.warning("sensor_state_unsaved sensor=%s file=%s error=%r", self.name,
                        self.state_file, exc.strerror)
            return
        self._saved = pulses

    def close(self) -> None:
        if self._device is not None:
            device, self._device = self._device, None
            with contextlib.suppress(Exception):
                device.close()
            with self._lock:
                pulses = self.tally.pulses
            self._save(pulses)


class PulseCounterOptions(SensorOptions):
    """A flow meter's pulses on a header pin: yields water (L, the total) and flow_rate
    (L/min)."""

    pin: PinName
    """The pin its signal wire is on (``GPIO17``); a 5 V meter's output through a divider."""
    pulses_per_litre: float = Field(gt=0)
    """From the meter's datasheet (a YF-S201: about 450; F = 7.5 x Q means 450 a litre)."""
    pull_up: bool = True
    """The Pi's pull-up on the pin (an open-collector output, as most meters have); false for
    a meter that drives the line both ways."""
    state_file: str | None = None
    """Where the count is kept over restarts (``/var/lib/edge-agent/water.count``); omitted:
    the total starts at 0 at each start."""

    @property
    def units(self) -> dict[str, str]:
        return dict(UNITS)


def _build(name: str, options: PulseCounterOptions, context: SensorContext) -> Sensor:
    return PulseCounterSensor(name, pin=options.pin, pulses_per_litre=options.pulses_per_litre,
                              pull_up=options.pull_up, state_file=options.state_file,
                              pin_factory=context.pin_factory)


SPEC = SensorSpec("pulse_counter", PulseCounterOptions, _build)
