"""``[sensors.NAME]``: what the agent reads, polled every ``interval_seconds``.

``type`` picks the schema; each section knows the quantities it yields (with units) before any
sensor is opened, so rules (``greenhouse.temperature > 28``) and Home Assistant discovery are
checked and announced first.

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
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Collection
from typing import Annotated, Any, Literal, Self

from pydantic import AfterValidator, BeforeValidator, Discriminator, Field, TypeAdapter, model_validator

from edge.config.section import Section, check_name
from peripherals.sensors.base import Scaling
from peripherals.sensors.catalog import (
    ADS1115_ADDRESSES,
    ADS1115_GAINS,
    BME280_ADDRESSES,
    BME280_UNITS,
    DS18B20_UNITS,
    PI_HEALTH_UNITS,
)

SENSOR_TYPES = ("pi", "ds18b20", "bme280", "ads1115", "mcp3008", "analog")

_QUANTITY = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}")
_W1_DEVICE = re.compile(r"28-[0-9a-f]{12}")
_BOARD_PIN = re.compile(r"[A-Za-z][A-Za-z0-9_-]*:[A-Za-z0-9_]+")


def sensor_name(value: str) -> str:
    """A sensor's name: rules write ``NAME.QUANTITY``, callers ``sensor:NAME``."""
    return check_name(value, "sensor name",
                      "; rules write NAME.QUANTITY, e.g. greenhouse.temperature")


SensorName = Annotated[str, AfterValidator(sensor_name)]


def _quantity(value: str) -> str:
    if not _QUANTITY.fullmatch(value):
        raise ValueError(f"quantity {value!r}: use letters, digits and '_', starting with a "
                         "letter (rules write NAME.QUANTITY)")
    return value


def _address(value: object) -> object:
    """I2C addresses as TOML integers (``0x76``) or text (``"0x76"``)."""
    if isinstance(value, str):
        try:
            return int(value, 0)
        except ValueError:
            raise ValueError(f"an I2C address such as 0x76, not {value!r}") from None
    return value


Quantity = Annotated[str, AfterValidator(_quantity)]
Address = Annotated[int, BeforeValidator(_address)]


def _w1_id(device: str | None) -> str | None:
    if device is not None and not _W1_DEVICE.fullmatch(device):
        raise ValueError(f"{device!r} is not a DS18B20 id: 28- and 12 hex digits, as "
                         "`ls /sys/bus/w1/devices` shows")
    return device


def _among(allowed: Collection[Any], explain: Callable[[Any], str]) -> AfterValidator:
    """A check that the value is one of ``allowed``; ``explain(value)`` says what is."""
    def check(value: Any) -> Any:
        if value not in allowed:
            raise ValueError(explain(value))
        return value
    return AfterValidator(check)


BME280_ADDRESS = _among(BME280_ADDRESSES, lambda address: f"0x{address:02x}: a BME280 answers at "
                        "0x76 (SDO to GND) or 0x77 (SDO to 3.3 V)")
ADS1115_ADDRESS = _among(ADS1115_ADDRESSES, lambda address: f"0x{address:02x}: an ADS1115 answers "
                         "at 0x48 (ADDR to GND), 0x49 (VDD), 0x4a (SDA) or 0x4b (SCL)")
ADS1115_GAIN = _among(ADS1115_GAINS, lambda fsr: f"{fsr} V is not a range the ADS1115 has; use one "
                      f"of {', '.join(map(str, ADS1115_GAINS))}")


def _board_and_pin(pin: str) -> str:
    if not _BOARD_PIN.fullmatch(pin):
        raise ValueError(f"{pin!r}: write the board and the pin as BOARD:PIN (e.g. \"uno:A0\")")
    return pin


class SensorConfigBase(Section):
    """What every sensor section has: its polling interval."""

    interval_seconds: float = Field(default=30.0, ge=0.05, le=86_400)
    """How often the agent reads it (a DS18B20 takes 0.75 s a read, a BME280 10 ms)."""

    @property
    def units(self) -> dict[str, str]:
        """Every quantity the sensor yields -> its unit."""
        raise NotImplementedError

    @property
    def quantities(self) -> tuple[str, ...]:
        return tuple(self.units)

    def driver_options(self) -> dict[str, Any]:
        """The keys :func:`peripherals.sensors.factory.create_sensor` takes (all but ``type``
        and ``interval_seconds``)."""
        return self.model_dump(exclude={"type", "interval_seconds"})


class ScaledSensorConfig(SensorConfigBase):
    """A raw measurement made meaningful: ``value = raw * scale + offset`` in ``unit``."""

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


class PiSensorConfig(SensorConfigBase):
    """The Pi's own health: cpu_temperature, the throttling flags (under_voltage, throttled,
    freq_capped, soft_temp_limit and their *_occurred), load_1m/5m/15m, disk_used, memory_used."""

    type: Literal["pi"]

    @property
    def units(self) -> dict[str, str]:
        return dict(PI_HEALTH_UNITS)


class Ds18b20SensorConfig(SensorConfigBase):
    """A DS18B20 on the 1-Wire bus (dtoverlay=w1-gpio): yields temperature (°C)."""

    type: Literal["ds18b20"]
    device: Annotated[str | None, AfterValidator(_w1_id)] = None
    """Its id in /sys/bus/w1/devices (``28-0123456789ab``); omitted: the only one there."""

    @property
    def units(self) -> dict[str, str]:
        return dict(DS18B20_UNITS)


class Bme280SensorConfig(SensorConfigBase):
    """A BME280 on I2C: yields temperature (°C), pressure (hPa) and humidity (%)."""

    type: Literal["bme280"]
    bus: int = Field(default=1, ge=0)
    """/dev/i2c-N; 1 is the header's I2C (GPIO2 SDA, GPIO3 SCL)."""
    address: Annotated[Address, BME280_ADDRESS] = 0x76

    @property
    def units(self) -> dict[str, str]:
        return dict(BME280_UNITS)


class Ads1115SensorConfig(ScaledSensorConfig):
    """One channel of an ADS1115 ADC on I2C, against GND: volts, then scale/offset."""

    type: Literal["ads1115"]
    channel: int = Field(ge=0, le=3)
    bus: int = Field(default=1, ge=0)
    address: Annotated[Address, ADS1115_ADDRESS] = 0x48
    fsr: Annotated[float, ADS1115_GAIN] = 4.096
    """Full-scale range in volts (the gain): 6.144, 4.096, 2.048, 1.024, 0.512 or 0.256; inputs
    never go above VDD whatever it says."""
    data_rate: Literal[8, 16, 32, 64, 128, 250, 475, 860] = 128
    """Samples per second; one conversion takes one sample period."""


class Mcp3008SensorConfig(ScaledSensorConfig):
    """One channel of an MCP3008 SPI ADC: ``value * vref`` volts, then scale/offset."""

    type: Literal["mcp3008"]
    channel: int = Field(ge=0, le=7)
    port: int = Field(default=0, ge=0, le=1)
    device: int = Field(default=0, ge=0, le=1)
    """Hardware SPI: port 0, chip select CE0 (GPIO8) or CE1 (GPIO7)."""
    select_pin: str | None = None
    """Instead of port/device: chip select on this GPIO (bit-banged SPI on GPIO11/10/9)."""
    vref: float = Field(default=3.3, gt=0)
    """The voltage on VREF; 1 gives the bare fraction 0..1."""

    @model_validator(mode="after")
    def check(self) -> Self:
        if self.select_pin is not None and {"port", "device"} & self.model_fields_set:
            raise ValueError("select_pin and port/device both choose the chip select; keep one")
        return self


class AnalogSensorConfig(ScaledSensorConfig):
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


SensorConfig = Annotated[
    PiSensorConfig | Ds18b20SensorConfig | Bme280SensorConfig | Ads1115SensorConfig
    | Mcp3008SensorConfig | AnalogSensorConfig,
    Discriminator("type"),
]
"""One ``[sensors.NAME]`` section, by its ``type``."""


@functools.cache
def _sensor_adapter() -> TypeAdapter[SensorConfig]:
    return TypeAdapter(SensorConfig)


def parse_sensor(data: object) -> SensorConfig:
    """One section on its own (tests, `edge-cli config` edits); a ValidationError if it is wrong."""
    return _sensor_adapter().validate_python(data)
