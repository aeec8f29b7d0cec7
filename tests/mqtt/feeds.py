"""A sensor feed as the sensor hub provides one (:class:`edge.mqtt.sensors.SensorFeed`), driven by
the test: readings handed to the bridge's listener, and failures the hub would record."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Reading:
    quantity: str
    value: float
    unit: str


class Feed:
    def __init__(self, units: dict[str, dict[str, str]], kinds: dict[str, str] | None = None):
        self.units = units
        self.kinds = kinds or {}
        self.listeners: list[Any] = []
        self.readings: dict[str, dict[str, Reading]] = {}
        self.errors: dict[str, str] = {}

    def describe(self, *, present: bool = False) -> dict[str, dict[str, str]]:
        return self.units

    def latest(self) -> dict[str, dict[str, Reading]]:
        return {name: dict(found) for name, found in self.readings.items() if found}

    def pins_read(self) -> frozenset[str]:
        return frozenset()

    def rows(self) -> list[dict[str, Any]]:
        return [{"name": name, "kind": self.kinds.get(name, "test"), "error": self.errors.get(name)}
                for name in self.units]

    def subscribe(self, listener: Any) -> Any:
        self.listeners.append(listener)
        return lambda: self.listeners.remove(listener)

    def read(self, sensor: str, quantity: str, value: float) -> None:
        """A good reading, as the hub hands it on (its error cleared first)."""
        reading = Reading(quantity, value, self.units[sensor][quantity])
        self.readings.setdefault(sensor, {})[quantity] = reading
        self.errors.pop(sensor, None)
        for listener in list(self.listeners):
            listener(sensor, reading)

    def fail(self, sensor: str, error: str) -> None:
        """A read that failed: the hub keeps the last readings and records the error."""
        self.errors[sensor] = error
