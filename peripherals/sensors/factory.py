"""Build a sensor driver from its config section. Adding a sensor type touches one line here.

>>> sensor = create_sensor("greenhouse", "ds18b20", {"device": None})
>>> sensor.kind, sensor.quantities
('ds18b20', ('temperature',))
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from peripherals.sensors.base import Scaling, Sensor

ANALOG_ON_BOARD = "analog"
"""A board's analog pin: read through the board that owns it, not built here."""


def create_sensor(name: str, kind: str, options: dict[str, Any], *, pin_factory: Any = None,
                  root: str | Path = "/") -> Sensor:
    """``options`` are the sensor's validated config keys other than ``type`` and
    ``interval_seconds``, every one present (the config model holds the defaults). ``root``
    is where /sys and /proc are (tests give a fake tree); ``pin_factory`` is the header's
    gpiozero pin factory, for SPI chips."""
    if kind == "pi":
        from peripherals.sensors.pi_health import PiHealthSensor

        return PiHealthSensor(name, root=root)
    if kind == "ds18b20":
        from peripherals.sensors.w1 import Ds18b20Sensor

        return Ds18b20Sensor(name, options["device"], root=root)
    if kind == "bme280":
        from peripherals.sensors.bme280 import Bme280Sensor

        return Bme280Sensor(name, bus=options["bus"], address=options["address"])
    if kind == "ads1115":
        from peripherals.sensors.ads1115 import Ads1115Sensor

        return Ads1115Sensor(name, options["channel"], bus=options["bus"],
                             address=options["address"], fsr=options["fsr"],
                             data_rate=options["data_rate"], scaling=scaling(options))
    if kind == "mcp3008":
        from peripherals.sensors.mcp3008 import Mcp3008Sensor

        return Mcp3008Sensor(name, options["channel"], port=options["port"],
                             device=options["device"], select_pin=options["select_pin"],
                             vref=options["vref"], scaling=scaling(options),
                             pin_factory=pin_factory)
    if kind == ANALOG_ON_BOARD:
        raise ValueError(f"sensor {name}: an analog pin is read through its board "
                         f"({options.get('pin')}), not built as a driver")
    raise ValueError(f"unknown sensor type {kind!r}")


def scaling(options: dict[str, Any]) -> Scaling:
    """The linear calibration in an ADC sensor's options."""
    return Scaling(scale=options["scale"], offset=options["offset"],
                   quantity=options["quantity"], unit=options["unit"])
