"""Sensirion SHT30/SHT31/SHT35 (temperature, humidity) on I2C, one single-shot measurement a read.

Each read sends the single-shot command 0x2400 (high repeatability, no clock stretching), waits
for the conversion (15.5 ms at most, datasheet table 4) and reads six bytes: the temperature
word, its CRC, the humidity word, its CRC. A word whose CRC-8 (polynomial 0x31, start 0xFF) does
not match is noise on the bus and the read fails. The conversions (datasheet 4.13):

>>> celsius(0x6666), round(relative_humidity(0x8000), 2)
(25.0, 50.0)
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Annotated

from pydantic import Field

from peripherals.base import DeviceNode
from peripherals.exc import SensorError
from peripherals.options import among
from peripherals.sensors.base import Reading, Sensor, SensorContext, SensorOptions, SensorSpec
from peripherals.sensors.i2c import Address, BusOpener, I2CChip, bus_node, crc8

log = logging.getLogger(__name__)

ADDRESSES = (0x44, 0x45)
"""0x44 with ADDR to GND (most breakout boards), 0x45 with ADDR to 3.3 V."""
UNITS = {"temperature": "°C", "humidity": "%"}

SINGLE_SHOT_HIGH = bytes([0x24, 0x00])
"""Single shot, high repeatability, clock stretching disabled."""
MEASURE_SECONDS = 0.016
ATTEMPTS = 3
"""Reads of the result before giving up: the chip does not acknowledge its address while it
still converts (a slow or cold chip)."""


def celsius(word: int) -> float:
    """The temperature word in °C: -45 + 175 * word / 65535."""
    return round(-45.0 + 175.0 * word / 65535.0, 2)


def relative_humidity(word: int) -> float:
    """The humidity word in %RH: 100 * word / 65535."""
    return 100.0 * word / 65535.0


def checked_words(data: bytes, where: str) -> list[int]:
    """The 16-bit words of ``data`` (word, CRC, word, CRC...), each checked against its CRC."""
    words = []
    for offset in range(0, len(data), 3):
        word, crc = data[offset:offset + 2], data[offset + 2]
        if crc8(word) != crc:
            raise SensorError(f"CRC mismatch in the reply of the SHT3x at {where} (word "
                              f"0x{word.hex()}, CRC 0x{crc:02x}, expected 0x{crc8(word):02x}): "
                              "noise on the bus; keep the I2C wires short and away from relays "
                              "and motors")
        words.append(int.from_bytes(word, "big"))
    return words


class Sht3xSensor(Sensor):
    """An SHT3x at ``address`` (0x44 or 0x45) on ``/dev/i2c-<bus>``; yields temperature (°C) and
    humidity (%)."""

    kind = "sht3x"

    def __init__(self, name: str, *, bus: int = 1, address: int = 0x44,
                 open_bus: BusOpener | None = None):
        if address not in ADDRESSES:
            raise ValueError(f"an SHT3x answers at 0x44 or 0x45, not 0x{address:02x}")
        self.name = name
        self.units = dict(UNITS)
        self.chip = I2CChip(bus, address, open_bus)

    def describe(self) -> str:
        return f"sht3x at {self.chip.where}"

    def read(self) -> dict[str, Reading]:
        self.chip.send(SINGLE_SHOT_HIGH, "starting a measurement (0x2400)")
        time.sleep(MEASURE_SECONDS)
        data = self._result()
        temperature, humidity = checked_words(data, self.chip.where)
        return {"temperature": Reading("temperature", celsius(temperature), "°C"),
                "humidity": Reading("humidity", round(relative_humidity(humidity), 2), "%")}

    def _result(self) -> bytes:
        for attempt in range(1, ATTEMPTS):
            try:
                return self.chip.receive(6, "reading the measurement")
            except SensorError:
                log.debug("sensor_busy sensor=%s chip=sht3x attempt=%d", self.name, attempt)
                time.sleep(MEASURE_SECONDS)
        return self.chip.receive(6, "reading the measurement")

    def close(self) -> None:
        self.chip.close()


class Sht3xOptions(SensorOptions):
    """An SHT30/SHT31/SHT35 on I2C: yields temperature (°C) and humidity (%)."""

    bus: int = Field(default=1, ge=0)
    """/dev/i2c-N; 1 is the header's I2C (GPIO2 SDA, GPIO3 SCL)."""
    address: Annotated[Address, among(ADDRESSES, lambda address: f"0x{address:02x}: an SHT3x "
                                      "answers at 0x44 (ADDR to GND) or 0x45 (ADDR to 3.3 V)")] = 0x44

    @property
    def units(self) -> dict[str, str]:
        return dict(UNITS)


def _build(name: str, options: Sht3xOptions, context: SensorContext) -> Sensor:
    return Sht3xSensor(name, bus=options.bus, address=options.address)


def _devices(options: Sht3xOptions) -> Sequence[DeviceNode]:
    return (bus_node(options.bus),)


SPEC = SensorSpec("sht3x", Sht3xOptions, _build, _devices)
