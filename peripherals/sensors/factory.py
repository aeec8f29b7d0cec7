"""Build a sensor driver from its config section. Adding a sensor driver touches one line here,
in :data:`SENSORS`'s table (peripherals/sensors/README.md says how); another package registers
its own through the ``edge_agent.sensors`` entry point group.

>>> sensor = create_sensor("greenhouse", "ds18b20", {"device": None})
>>> sensor.kind, sensor.quantities
('ds18b20', ('temperature',))
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from peripherals.registry import Registry
from peripherals.sensors.base import Sensor, SensorContext, SensorOptions, SensorSpec

ANALOG_ON_BOARD = "analog"
"""A board's analog pin: a sensor type too, read through the board that owns it, not built
here (the agent reads it through its one door to the pins)."""

SENSORS: Registry[SensorSpec[Any]] = Registry("sensor", "edge_agent.sensors", {
    "pi": "peripherals.sensors.pi_health:SPEC",
    "ds18b20": "peripherals.sensors.w1:SPEC",
    "bme280": "peripherals.sensors.bme280:SPEC",
    "ads1115": "peripherals.sensors.ads1115:SPEC",
    "mcp3008": "peripherals.sensors.mcp3008:SPEC",
    "dht22": "peripherals.sensors.dht22:SPEC",
    "sht3x": "peripherals.sensors.sht3x:SPEC",
    "aht20": "peripherals.sensors.aht20:SPEC",
    "hcsr04": "peripherals.sensors.hcsr04:SPEC",
    "pulse_counter": "peripherals.sensors.pulse_counter:SPEC",
}, SensorSpec, reserved=(ANALOG_ON_BOARD,))
"""Every sensor driver, by the ``type`` its section names."""


def create_sensor(name: str, kind: str, options: SensorOptions | Mapping[str, Any], *,
                  pin_factory: Any = None, root: str | Path = "/") -> Sensor:
    """The driver of sensor ``name``, not yet opened. ``options`` is its validated section (an
    instance of the driver's options model), or the keys to validate into one. ``root`` is where
    /sys and /proc are (tests give a fake tree); ``pin_factory`` is the header's gpiozero pin
    factory, for SPI chips. An unknown ``kind`` is a ValueError naming the known ones."""
    if kind == ANALOG_ON_BOARD:
        # the keys as written name the pin; a validated analog section is the agent's, not a driver's
        where = f" ({options['pin']})" if isinstance(options, Mapping) and "pin" in options else ""
        raise ValueError(f"sensor {name}: an analog pin is read through its board{where}, not "
                         "built as a driver")
    spec = SENSORS.get(kind)
    if not isinstance(options, spec.options):
        options = spec.options.model_validate(options)
    return spec.build(name, options, SensorContext(root, pin_factory))
