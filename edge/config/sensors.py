"""``[sensors.NAME]``: what the agent reads, polled every ``interval_seconds``.

``type`` picks the schema: a sensor driver's options (registered in
:data:`peripherals.sensors.factory.SENSORS`, built in or from an installed package) with the
agent's ``type`` and ``interval_seconds`` added, or ``analog``, a board's analog pin. Each
section knows the quantities it yields (with units) before any sensor is opened, so rules
(``greenhouse.temperature > 28``) and Home Assistant discovery are checked and announced first.

>>> section = parse_sensor({"type": "bme280", "address": "0x77"})
>>> section.address, section.units
(119, {'temperature': '°C', 'pressure': 'hPa', 'humidity': '%'})
>>> parse_sensor({"type": "ads1115", "channel": 1, "scale": 100,
...               "unit": "°C", "quantity": "temperature"}).quantities
('temperature',)
>>> parse_sensor({"type": "analog", "pin": "uno:A0", "scale": 500}).scaling
Scaling(scale=500.0, offset=0.0, quantity='value', unit='')
>>> sensor_name("greenhouse-1")
'greenhouse-1'
>>> sensor_name("history")
Traceback (most recent call last):
...
ValueError: sensor name 'history' is taken by `edge-cli sensors history NAME`; choose another name
"""

from __future__ import annotations

import functools
import re
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, TypeAdapter

from edge.config.section import Section, SectionByType, adapter_section, check_name
from peripherals.sensors.base import Quantity, ScaledOptions, SensorOptions
from peripherals.sensors.factory import ANALOG_ON_BOARD, SENSORS

_BOARD_PIN = re.compile(r"[A-Za-z][A-Za-z0-9_-]*:[A-Za-z0-9_]+")


RESERVED_SENSOR_NAMES = frozenset({"history", "chart", "simulate"})
"""Words of ``edge-cli sensors history|chart|simulate NAME``, so never a sensor's name."""


def sensor_name(value: str) -> str:
    """A sensor's name: rules write ``NAME.QUANTITY``, callers ``sensor:NAME``; ``history``
    and ``chart`` are ``edge-cli sensors``' own words."""
    if value in RESERVED_SENSOR_NAMES:
        raise ValueError(f"sensor name {value!r} is taken by `edge-cli sensors {value} NAME`; "
                         "choose another name")
    return check_name(value, "sensor name",
                      "; rules write NAME.QUANTITY, e.g. greenhouse.temperature")


SensorName = Annotated[str, AfterValidator(sensor_name)]


class SensorSection(Section, SensorOptions):
    """What every sensor section has besides its driver's options: its type and its polling
    interval."""

    type: str
    interval_seconds: float = Field(default=30.0, ge=0.05, le=86_400)
    """How often the agent reads it (a DS18B20 takes 0.75 s a read, a BME280 10 ms)."""
    simulate: bool = False
    """Readings held in memory, set by ``edge-cli sensors simulate NAME QUANTITY VALUE`` (or a
    scenario), instead of the device: for trying a config before it is wired."""


def _board_and_pin(pin: str) -> str:
    if not _BOARD_PIN.fullmatch(pin):
        raise ValueError(f"{pin!r}: write the board and the pin as BOARD:PIN (e.g. \"uno:A0\")")
    return pin


class AnalogSensorConfig(SensorSection, ScaledOptions):
    """An analog pin of an Arduino or STM32 board, read through that board: 0..1 of its
    reference, then scale/offset (an LM35 on a 5 V Uno: scale = 500, unit = "°C")."""

    type: Literal["analog"]
    pin: Annotated[str, AfterValidator(_board_and_pin)]
    """``BOARD:PIN``: the board's name in [boards] and an analog pin allowlisted there."""
    quantity: Quantity = "value"
    unit: str = ""

    @property
    def board(self) -> str:
        return self.pin.partition(":")[0]

    @property
    def board_pin(self) -> str:
        return self.pin.partition(":")[2]


@functools.cache
def sensor_section(kind: str) -> type[SensorSection] | None:
    """Sensor type ``kind``'s section, made on first use: a driver's options with ``type`` and
    ``interval_seconds``, or a board's analog pin; None when there is no such type."""
    if kind == ANALOG_ON_BOARD:
        return AnalogSensorConfig
    spec = SENSORS.find(kind)
    return adapter_section(kind, spec.options, SensorSection) if spec is not None else None


_BY_TYPE = SectionByType(sensor_section, lambda: (*SENSORS.kinds, ANALOG_ON_BOARD))

SensorConfig = Annotated[SensorSection, _BY_TYPE]
"""One ``[sensors.NAME]`` section, by its ``type``."""


def sensor_sections() -> dict[str, type[SensorSection]]:
    """Every sensor type's section, in the registry's order, then a board's analog pin: loads
    them all."""
    return _BY_TYPE.members()


@functools.cache
def _sensor_adapter() -> TypeAdapter[SensorConfig]:
    return TypeAdapter(SensorConfig)


def parse_sensor(data: object) -> SensorSection:
    """One section on its own (tests, `edge-cli config` edits); a ValidationError if it is wrong."""
    return _sensor_adapter().validate_python(data)
