"""What the bridge needs from the sensors: a feed of readings, and which sensors are failing.
The sensor hub implements it.

A feed that describes ``{"greenhouse": {"temperature": "°C"}}`` publishes
``<base>/sensor/greenhouse/temperature`` and appears in Home Assistant as a temperature sensor.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol


class Reading(Protocol):
    """One measured value (``peripherals.sensors.base.Reading`` has these fields)."""

    @property
    def quantity(self) -> str: ...

    @property
    def value(self) -> float: ...

    @property
    def unit(self) -> str: ...


class SensorFeed(Protocol):
    def describe(self, *, present: bool = False) -> Mapping[str, Mapping[str, str]]:
        """Every sensor and what it measures: sensor -> quantity -> unit; with ``present``,
        only the quantities this machine has sources for (what the bridge announces)."""
        ...

    def latest(self) -> Mapping[str, Mapping[str, Reading]]:
        """The newest reading of each sensor's quantities (sensor -> quantity -> reading)."""
        ...

    def rows(self) -> list[dict[str, Any]]:
        """Each sensor as status shows it; the bridge reads ``name``, ``kind`` (its type:
        ``pi``) and ``error`` (why its latest read failed; None while its reads succeed)."""
        ...

    def pins_read(self) -> frozenset[str]:
        """The board pins (``uno:A0``) sensors read and scale: the sensor's entity shows such a
        pin, so the pin gets none of its own (one analog sensor, one Home Assistant entity)."""
        ...

    def subscribe(self, listener: Callable[[str, Reading], None]) -> Callable[[], None]:
        """Call ``listener(sensor, reading)`` on the event loop for each new reading; returns
        the function that unsubscribes."""
        ...
