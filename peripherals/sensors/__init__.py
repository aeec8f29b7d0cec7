"""Sensor drivers: things the agent reads but never drives (1-Wire and I2C chips, SPI ADCs,
the Pi's own health), behind the :class:`peripherals.sensors.base.Sensor` protocol, each one
registered as a :class:`peripherals.sensors.base.SensorSpec` (README.md: "Adding a sensor driver")
and built from config by :func:`peripherals.sensors.factory.create_sensor`.

>>> from peripherals.sensors.bme280 import Bme280Sensor
>>> Bme280Sensor("greenhouse", bus=1, address=0x76).quantities
('temperature', 'pressure', 'humidity')

The face is lazy (PEP 562): the names in ``__all__`` load from their modules when first used, so
importing any module of the package (which runs this file first) loads none of them.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from peripherals.sensors.base import (
        Reading,
        ScaledOptions,
        Scaling,
        Sensor,
        SensorContext,
        SensorOptions,
        SensorSpec,
    )
    from peripherals.sensors.factory import create_sensor

__all__ = ["Reading", "ScaledOptions", "Scaling", "Sensor", "SensorContext", "SensorOptions",
           "SensorSpec", "create_sensor"]

_HOMES = {
    "base": ("Reading", "ScaledOptions", "Scaling", "Sensor", "SensorContext", "SensorOptions",
             "SensorSpec"),
    "factory": ("create_sensor",),
}
"""Each module, and the names of ``__all__`` it holds."""


def __getattr__(name: str) -> object:
    for module, names in _HOMES.items():
        if name in names:
            return getattr(import_module(f"{__name__}.{module}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
