"""HC-SR04 ultrasonic distance sensor (a tank's level) through gpiozero's ``DistanceSensor``.

Each read opens the sensor on its echo and trigger pins, lets gpiozero ping a few times (every
60 ms; the distance is the median of the echoes, so one stray echo does not count), and closes
it again: the reading is fresh, and a sensor that stopped answering fails the read instead of
repeating its last distance. The echo pin takes 5 V from the module: wire it through a divider
(1 kΩ and 2 kΩ) to the Pi's 3.3 V input.

With ``empty_distance`` and ``full_distance`` (from the sensor to the surface, in cm) it also
yields ``level``, how full the tank is:

>>> level_percent(60.0, empty=110.0, full=10.0)
50.0
>>> level_percent(120.0, empty=110.0, full=10.0)  # below empty: 0, never negative
0.0
"""

from __future__ import annotations

import logging
import time
import warnings
from typing import Any, Self

from pydantic import Field, model_validator

from peripherals.exc import SensorError
from peripherals.sensors.base import Reading, Sensor, SensorContext, SensorOptions, SensorSpec
from peripherals.sensors.header import PinName, open_on_header

log = logging.getLogger(__name__)

SAMPLES = 5
SAMPLE_SECONDS = 0.06
"""gpiozero's DistanceSensor pings every 60 ms (the HC-SR04 wants 60 ms between pings)."""
ECHO_TIMEOUT = 1.0
"""After the samples' time, how long more to wait for a first echo before the read fails."""


def level_percent(distance: float, *, empty: float, full: float) -> float:
    """How full a tank is, in %, from the distance to its surface (clamped to 0..100)."""
    return round(min(100.0, max(0.0, (empty - distance) / (empty - full) * 100.0)), 1)


class Hcsr04Sensor(Sensor):
    """An HC-SR04 with its echo on ``echo_pin`` and trigger on ``trigger_pin``; yields distance
    (cm), and level (%) when ``level`` gives the (empty, full) distances. ``pin_factory`` is the
    header's gpiozero pin factory (None: gpiozero's default)."""

    kind = "hcsr04"

    def __init__(self, name: str, *, echo_pin: str, trigger_pin: str,
                 max_distance: float = 400.0, level: tuple[float, float] | None = None,
                 pin_factory: Any = None):
        self.name, self.echo_pin, self.trigger_pin = name, echo_pin, trigger_pin
        self.max_distance, self.level, self.pin_factory = max_distance, level, pin_factory
        self.units = {"distance": "cm"} | ({"level": "%"} if level else {})

    def describe(self) -> str:
        return f"hcsr04 echo {self.echo_pin} trigger {self.trigger_pin}"

    def read(self) -> dict[str, Reading]:
        device = open_on_header(self._open, "the HC-SR04",
                                f"{self.echo_pin} and {self.trigger_pin}")
        try:
            metres = self._distance(device)
        finally:
            device.close()
        centimetres = round(metres * 100.0, 1)
        readings = {"distance": Reading("distance", centimetres, "cm")}
        if self.level is not None:
            empty, full = self.level
            readings["level"] = Reading("level", level_percent(centimetres, empty=empty,
                                                               full=full), "%")
        return readings

    def _open(self) -> Any:
        from gpiozero import DistanceSensor  # gpiozero: imported where the sensor is opened
        from gpiozero.exc import PWMSoftwareFallback

        with warnings.catch_warnings():
            # gpiozero suggests pigpio for its timing; lgpio's edge timestamps are the kernel's
            warnings.simplefilter("ignore", PWMSoftwareFallback)
            return DistanceSensor(echo=self.echo_pin, trigger=self.trigger_pin,
                                  queue_len=SAMPLES, max_distance=self.max_distance / 100.0,
                                  partial=True, pin_factory=self.pin_factory)

    def _distance(self, device: Any) -> float:
        """The median echo in metres once the samples are in; 0.0 means none came back."""
        time.sleep(SAMPLES * SAMPLE_SECONDS)
        deadline = time.monotonic() + ECHO_TIMEOUT
        while (metres := float(device.distance)) == 0.0:
            if time.monotonic() > deadline:
                raise SensorError(f"no echo from the HC-SR04 ({self.describe()}): check the "
                                  "wiring (VCC to 5 V, echo through a 1k/2k divider to "
                                  f"{self.echo_pin}, trigger to {self.trigger_pin}, GND) and "
                                  "that something is within 4 m in front of it")
            time.sleep(SAMPLE_SECONDS / 3)
        return metres


class Hcsr04Options(SensorOptions):
    """An HC-SR04 ultrasonic sensor on two header pins: yields distance (cm), and level (%) with
    ``empty_distance`` and ``full_distance``."""

    echo_pin: PinName
    """The pin its echo reaches through a 5 V -> 3.3 V divider (``GPIO24``)."""
    trigger_pin: PinName
    """The pin that drives its trigger (``GPIO23``)."""
    max_distance: float = Field(default=400.0, gt=2, le=600)
    """cm; farther echoes read as this (the HC-SR04 reaches about 4 m)."""
    empty_distance: float | None = Field(default=None, gt=0)
    """cm from the sensor to the surface of an empty tank: with ``full_distance``, yields level."""
    full_distance: float | None = Field(default=None, ge=0)
    """cm from the sensor to the surface of a full tank (at least 2 cm: it sees nothing nearer)."""

    @model_validator(mode="after")
    def check(self) -> Self:
        if (self.empty_distance is None) != (self.full_distance is None):
            raise ValueError("set both empty_distance and full_distance (cm from the sensor to "
                             "the surface when the tank is empty and full), or neither")
        if self.empty_distance is not None and self.full_distance is not None \
                and self.full_distance >= self.empty_distance:
            raise ValueError("full_distance must be less than empty_distance: the sensor looks "
                             "down at the surface, which comes nearer as the tank fills")
        if self.echo_pin == self.trigger_pin:
            raise ValueError("echo_pin and trigger_pin must be two different pins")
        return self

    @property
    def level(self) -> tuple[float, float] | None:
        if self.empty_distance is None or self.full_distance is None:
            return None
        return self.empty_distance, self.full_distance

    @property
    def units(self) -> dict[str, str]:
        return {"distance": "cm"} | ({"level": "%"} if self.level else {})


def _build(name: str, options: Hcsr04Options, context: SensorContext) -> Sensor:
    return Hcsr04Sensor(name, echo_pin=options.echo_pin, trigger_pin=options.trigger_pin,
                        max_distance=options.max_distance, level=options.level,
                        pin_factory=context.pin_factory)


SPEC = SensorSpec("hcsr04", Hcsr04Options, _build)
