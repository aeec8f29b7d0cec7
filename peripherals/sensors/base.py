"""The Sensor protocol and the value it reads.

A sensor is something the agent reads but never drives: a thermometer on the 1-Wire bus, a
BME280 on I2C, an ADC channel, the Pi's own health. Each one yields a fixed set of named
quantities, known before the first read so that rules and Home Assistant discovery can be
checked and announced while the hardware is still unplugged.

>>> Reading("temperature", 21.3, "°C")
Reading(quantity='temperature', value=21.3, unit='°C')
>>> str(Reading("humidity", 48.25, "%"))
'48.25 %'
>>> Scaling(scale=100, offset=-50, quantity="temperature", unit="°C").reading(0.75)
Reading(quantity='temperature', value=25.0, unit='°C')
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol, runtime_checkable


@dataclass(frozen=True)
class Reading:
    """One measured quantity: ``value`` in ``unit`` (``°C``, ``%``, ``hPa``, ``V``, or '')."""

    quantity: str
    value: float
    unit: str

    def __str__(self) -> str:
        return f"{self.value:g} {self.unit}".rstrip()


@dataclass(frozen=True)
class Scaling:
    """A linear calibration of a raw measurement: ``value = raw * scale + offset``, reported as
    ``quantity`` in ``unit`` (an LM35 on an ADC: scale 100, unit °C)."""

    scale: float = 1.0
    offset: float = 0.0
    quantity: str = "voltage"
    unit: str = "V"

    def reading(self, raw: float) -> Reading:
        return Reading(self.quantity, raw * self.scale + self.offset, self.unit)


@runtime_checkable
class Sensor(Protocol):
    """What every sensor driver provides. Drivers subclass this Protocol, so the defaults below
    (``quantities`` from ``units``, a ``close`` with nothing to release, ``describe`` naming
    the kind) come with it.

    Construction never touches the hardware: the bus or device is opened by the first
    :meth:`read`, and opened again after a failure, so a sensor plugged in late (or replugged)
    starts reading without a restart."""

    name: str
    kind: str
    units: Mapping[str, str]
    """Every quantity the sensor yields, with its unit; fixed when the sensor is built."""

    @property
    def quantities(self) -> tuple[str, ...]:
        """The quantities :meth:`read` yields, in a stable order."""
        return tuple(self.units)

    @abstractmethod
    def read(self) -> dict[str, Reading]:
        """Measure now and return the readings by quantity. BLOCKING (a DS18B20 takes 0.75 s, a
        BME280 about 10 ms): the runtime calls it in a thread. Raises SensorError (the next
        read may succeed) or SensorUnavailable (nothing will work until the set-up is fixed),
        each saying what to do. A sensor whose sources are partly absent (the Pi's health
        on another machine) returns the quantities it could measure."""
        ...

    def close(self) -> None:
        """Release the bus or device; a later :meth:`read` opens it again."""
        return None

    def describe(self) -> str:
        """Where the sensor is, for status and doctor (``bme280 at 0x76 on /dev/i2c-1``)."""
        return self.kind
