"""The Sensor protocol, the value it reads, and the spec a sensor driver registers
(:class:`SensorSpec`: its type name, its options, how it is built).

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

import re
from abc import abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, ClassVar, Protocol, TypeVar, runtime_checkable

from pydantic import AfterValidator

from peripherals.base import DeviceNode, no_devices
from peripherals.options import Options
from peripherals.registry import AdapterSpec


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


VOLTS = Scaling()
"""No calibration: the raw measurement, in volts (an ADC channel's default)."""


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

    @property
    def present(self) -> Mapping[str, str]:
        """The quantities this machine has sources for, with their units: what is announced
        (Home Assistant would show a quantity that can never be read as unknown for ever).
        Rules and interlocks are checked against every quantity in ``units``, so a config
        written for a Pi passes its check on another machine. Default: all of them."""
        return self.units

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


class SensorOptions(Options):
    """The keys of a ``[sensors.NAME]`` section its driver reads; a driver's options subclass it
    and say what the sensor yields, before any sensor is opened, so that rules and Home
    Assistant discovery are checked and announced first. ``type`` and ``interval_seconds``
    belong to the agent (``edge.config.sensors``), which adds them to the section."""

    @property
    def units(self) -> dict[str, str]:
        """Every quantity the sensor yields -> its unit (the driver's ``units``)."""
        raise NotImplementedError

    @property
    def quantities(self) -> tuple[str, ...]:
        return tuple(self.units)


_QUANTITY = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}")


def _quantity(value: str) -> str:
    if not _QUANTITY.fullmatch(value):
        raise ValueError(f"quantity {value!r}: use letters, digits and '_', starting with a "
                         "letter (rules write NAME.QUANTITY)")
    return value


Quantity = Annotated[str, AfterValidator(_quantity)]
"""A quantity's name as rules write it (``greenhouse.temperature``)."""


class ScaledOptions(SensorOptions):
    """A raw measurement made meaningful: ``value = raw * scale + offset`` in ``unit``.

    >>> ScaledOptions(scale=100, unit="°C", quantity="temperature").units
    {'temperature': '°C'}
    """

    scale: float = 1.0
    offset: float = 0.0
    quantity: Quantity = "voltage"
    unit: str = "V"

    @property
    def units(self) -> dict[str, str]:
        return {self.quantity: self.unit}

    @property
    def scaling(self) -> Scaling:
        """The calibration as the drivers (and an analog pin's reader) apply it."""
        return Scaling(self.scale, self.offset, self.quantity, self.unit)


@dataclass(frozen=True)
class SensorContext:
    """What a sensor is built with besides its section: where /sys and /proc are (tests give a
    fake tree) and the header's gpiozero pin factory (for SPI chips)."""

    root: str | Path = "/"
    pin_factory: Any = None


SensorOptionsT = TypeVar("SensorOptionsT", bound=SensorOptions)


@dataclass(frozen=True)
class SensorSpec(AdapterSpec[SensorOptionsT]):
    """One sensor driver, registered under ``kind`` (the section's ``type``) in
    :data:`peripherals.sensors.factory.SENSORS`.

    ``build(name, options, context)`` makes the driver without touching the hardware (its first
    ``read`` does); ``options`` is the validated section, an instance of ``options``, and the
    driver's ``units`` are the options' ``units``. ``devices(options)`` names the device nodes
    the driver opens, for doctor's groups and devices checks. Config validation imports every
    spec's module: keep it light (import a chip's library where the bus is opened)."""

    build: Callable[[str, SensorOptionsT, SensorContext], Sensor]
    devices: Callable[[SensorOptionsT], Sequence[DeviceNode]] = no_devices
    options_base: ClassVar[type[Options]] = SensorOptions
