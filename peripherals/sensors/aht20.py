"""Aosong AHT20 (temperature, humidity) on I2C at 0x38 (the AHT21 and AHT25 speak the same).

The first read checks the status byte's calibration bit and sends the initialisation command
(0xBE 0x08 0x00) when it is clear. Each read then triggers a measurement (0xAC 0x33 0x00), waits
80 ms, and reads seven bytes: the status (bit 7: still busy, read again), 20 bits of humidity,
20 bits of temperature and a CRC-8 (polynomial 0x31, start 0xFF) over the first six. The
conversions (datasheet 6.1):

>>> raw_values(bytes([0x1C, 0x80, 0x00, 0x05, 0x99, 0x9A]))
(524288, 367002)
>>> humidity_percent(524288), round(celsius(367002), 2)
(50.0, 20.0)
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence

from pydantic import Field

from peripherals.base import DeviceNode
from peripherals.exc import SensorError
from peripherals.sensors.base import Reading, Sensor, SensorContext, SensorOptions, SensorSpec
from peripherals.sensors.i2c import BusOpener, I2CChip, bus_node, crc8

log = logging.getLogger(__name__)

ADDRESS = 0x38
UNITS = {"temperature": "°C", "humidity": "%"}

INITIALISE = bytes([0xBE, 0x08, 0x00])
TRIGGER = bytes([0xAC, 0x33, 0x00])
STATUS_BUSY, STATUS_CALIBRATED = 0x80, 0x08
POWER_ON_SECONDS, INITIALISE_SECONDS, MEASURE_SECONDS = 0.040, 0.010, 0.080
BUSY_ATTEMPTS = 5
"""Reads of a busy result, 10 ms apart, before the read fails."""
FULL_SCALE = 1 << 20


def raw_values(data: bytes) -> tuple[int, int]:
    """(humidity, temperature), 20 bits each, from the status byte and the five data bytes."""
    humidity = (data[1] << 12) | (data[2] << 4) | (data[3] >> 4)
    temperature = ((data[3] & 0x0F) << 16) | (data[4] << 8) | data[5]
    return humidity, temperature


def humidity_percent(word: int) -> float:
    return word / FULL_SCALE * 100.0


def celsius(word: int) -> float:
    return word / FULL_SCALE * 200.0 - 50.0


class Aht20Sensor(Sensor):
    """An AHT20 at 0x38 on ``/dev/i2c-<bus>``; yields temperature (°C) and humidity (%)."""

    kind = "aht20"

    def __init__(self, name: str, *, bus: int = 1, open_bus: BusOpener | None = None):
        self.name = name
        self.units = dict(UNITS)
        self.chip = I2CChip(bus, ADDRESS, open_bus)
        self._calibrated = False

    def describe(self) -> str:
        return f"aht20 at {self.chip.where}"

    def read(self) -> dict[str, Reading]:
        try:
            if not self._calibrated:
                self._initialise()
            data = self._measure()
        except SensorError:
            self.close()
            raise
        if crc8(data[:6]) != data[6]:
            raise SensorError(f"CRC mismatch in the reply of the AHT20 at {self.chip.where} "
                              f"(0x{data[6]:02x}, expected 0x{crc8(data[:6]):02x}): noise on the "
                              "bus; keep the I2C wires short and away from relays and motors")
        humidity, temperature = raw_values(data)
        return {"temperature": Reading("temperature", round(celsius(temperature), 2), "°C"),
                "humidity": Reading("humidity", round(humidity_percent(humidity), 2), "%")}

    def _initialise(self) -> None:
        status = self.chip.receive(1, "reading the status")[0]
        if not status & STATUS_CALIBRATED:
            time.sleep(POWER_ON_SECONDS)
            self.chip.send(INITIALISE, "initialising (0xBE)")
            time.sleep(INITIALISE_SECONDS)
            log.debug("sensor_opened sensor=%s chip=aht20 where=%r initialised=true", self.name,
                      self.chip.where)
        self._calibrated = True

    def _measure(self) -> bytes:
        self.chip.send(TRIGGER, "starting a measurement (0xAC)")
        time.sleep(MEASURE_SECONDS)
        for _ in range(BUSY_ATTEMPTS):
            data = self.chip.receive(7, "reading the measurement")
            if not data[0] & STATUS_BUSY:
                return data
            time.sleep(0.010)
        raise SensorError(f"the AHT20 at {self.chip.where} was still measuring after "
                          f"{MEASURE_SECONDS + BUSY_ATTEMPTS * 0.010:.2f} s; check its supply "
                          "voltage (2.2 to 5.5 V)")

    def close(self) -> None:
        """Close the bus; the next read checks the calibration bit again (a replugged chip)."""
        self._calibrated = False
        self.chip.close()


class Aht20Options(SensorOptions):
    """An AHT20 (or AHT21/AHT25) on I2C at 0x38: yields temperature (°C) and humidity (%)."""

    bus: int = Field(default=1, ge=0)
    """/dev/i2c-N; 1 is the header's I2C (GPIO2 SDA, GPIO3 SCL). The chip's address is fixed
    (0x38)."""

    @property
    def units(self) -> dict[str, str]:
        return dict(UNITS)


def _build(name: str, options: Aht20Options, context: SensorContext) -> Sensor:
    return Aht20Sensor(name, bus=options.bus)


def _devices(options: Aht20Options) -> Sequence[DeviceNode]:
    return (bus_node(options.bus),)


SPEC = SensorSpec("aht20", Aht20Options, _build, _devices)
