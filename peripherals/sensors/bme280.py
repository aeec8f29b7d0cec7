"""Bosch BME280 (temperature, pressure, humidity) on I2C, in forced mode.

Each read starts one measurement (oversampling x1 for all three, no filter: about 10 ms),
waits for it, and compensates the raw values with the chip's own trimming parameters using the
datasheet's double-precision formulas (BME280 datasheet, appendix 8.1; the same temperature and
pressure formulas as the BMP280's, whose datasheet works one example through):

>>> cal = Calibration(t1=27504, t2=26435, t3=-1000, p1=36477, p2=-10685, p3=3024, p4=2855,
...                   p5=140, p6=-7, p7=15500, p8=-14600, p9=6000,
...                   h1=75, h2=362, h3=0, h4=333, h5=0, h6=30)
>>> celsius, t_fine = compensate_temperature(cal, 519888)
>>> round(celsius, 2), int(t_fine)
(25.08, 128422)
>>> round(compensate_pressure(cal, 415148, t_fine), 2)
100653.27

t_fine is carried as a float: the datasheet's C code keeps it in a 32-bit integer shared with
its integer formulas, which moves the pressure by less than 0.01 Pa (the worked example's
100653.27 Pa is computed from the unrounded value; the chip resolves 0.2 Pa).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated

from pydantic import Field

from peripherals.base import DeviceNode
from peripherals.exc import SensorError, SensorUnavailable
from peripherals.options import among
from peripherals.sensors.base import Reading, Sensor, SensorContext, SensorOptions, SensorSpec
from peripherals.sensors.i2c import Address, BusOpener, I2CChip, bus_node, little_endian

log = logging.getLogger(__name__)

ADDRESSES = (0x76, 0x77)
"""0x76 with SDO to GND (most breakout boards), 0x77 with SDO to 3.3 V."""
UNITS = {"temperature": "°C", "pressure": "hPa", "humidity": "%"}

CHIP_ID = 0x60
REG_ID, REG_CALIB_TP, REG_CALIB_H = 0xD0, 0x88, 0xE1
REG_CTRL_HUM, REG_STATUS, REG_CTRL_MEAS, REG_CONFIG, REG_DATA = 0xF2, 0xF3, 0xF4, 0xF5, 0xF7
CTRL_HUM = 0b001             # humidity oversampling x1
CTRL_MEAS = 0b001_001_01     # temperature x1, pressure x1, forced mode
STATUS_BUSY = 0b0000_1001    # measuring | im_update
MEASURE_SECONDS = 0.010      # 9.3 ms at most with x1/x1/x1 (datasheet 9.1)
MEASURE_TIMEOUT = 0.2
SKIPPED_20BIT, SKIPPED_16BIT = 0x80000, 0x8000

OTHER_CHIPS = {0x56: "a BMP280 (no humidity)", 0x57: "a BMP280 (no humidity)",
               0x58: "a BMP280 (no humidity)", 0x61: "a BME680 (a different register map)"}


@dataclass(frozen=True)
class Calibration:
    """The trimming parameters dig_T1..dig_H6 programmed into each chip at the factory."""

    t1: int
    t2: int
    t3: int
    p1: int
    p2: int
    p3: int
    p4: int
    p5: int
    p6: int
    p7: int
    p8: int
    p9: int
    h1: int
    h2: int
    h3: int
    h4: int
    h5: int
    h6: int

    @classmethod
    def from_registers(cls, tp: bytes, h: bytes) -> Calibration:
        """From the 26 bytes at 0x88..0xA1 and the 7 at 0xE1..0xE7 (datasheet table 16)."""
        if len(tp) != 26 or len(h) != 7:
            raise ValueError("the calibration blocks are 26 and 7 bytes long")
        words = [little_endian(tp, 2 * i, signed=i not in (0, 3)) for i in range(12)]
        t1, t2, t3, p1, p2, p3, p4, p5, p6, p7, p8, p9 = words
        e4, e6 = int.from_bytes(h[3:4], "big", signed=True), int.from_bytes(h[5:6], "big", signed=True)
        return cls(t1, t2, t3, p1, p2, p3, p4, p5, p6, p7, p8, p9,
                   h1=tp[25], h2=little_endian(h, 0, signed=True), h3=h[2],
                   h4=(e4 * 16) | (h[4] & 0x0F), h5=(e6 * 16) | (h[4] >> 4),
                   h6=int.from_bytes(h[6:7], "big", signed=True))


def compensate_temperature(cal: Calibration, adc_t: int) -> tuple[float, float]:
    """Degrees Celsius and t_fine (which the pressure and humidity formulas need)."""
    var1 = (adc_t / 16384.0 - cal.t1 / 1024.0) * cal.t2
    var2 = (adc_t / 131072.0 - cal.t1 / 8192.0) ** 2 * cal.t3
    return (var1 + var2) / 5120.0, var1 + var2


def compensate_pressure(cal: Calibration, adc_p: int, t_fine: float) -> float:
    """Pascal."""
    var1 = t_fine / 2.0 - 64000.0
    var2 = var1 * var1 * cal.p6 / 32768.0
    var2 = var2 + var1 * cal.p5 * 2.0
    var2 = var2 / 4.0 + cal.p4 * 65536.0
    var1 = (cal.p3 * var1 * var1 / 524288.0 + cal.p2 * var1) / 524288.0
    var1 = (1.0 + var1 / 32768.0) * cal.p1
    if var1 == 0.0:
        raise SensorError("the BME280's pressure calibration is zero (dig_P1 = 0): the chip's "
                          "trimming data read back empty; check the wiring and read again")
    p = 1048576.0 - adc_p
    p = (p - var2 / 4096.0) * 6250.0 / var1
    var1 = cal.p9 * p * p / 2147483648.0
    var2 = p * cal.p8 / 32768.0
    return p + (var1 + var2 + cal.p7) / 16.0


def compensate_humidity(cal: Calibration, adc_h: int, t_fine: float) -> float:
    """Relative humidity in percent, clamped to 0..100."""
    h = t_fine - 76800.0
    h = (adc_h - (cal.h4 * 64.0 + cal.h5 / 16384.0 * h)) * (
        cal.h2 / 65536.0 * (1.0 + cal.h6 / 67108864.0 * h * (1.0 + cal.h3 / 67108864.0 * h)))
    h = h * (1.0 - cal.h1 * h / 524288.0)
    return min(100.0, max(0.0, h))


def raw_values(data: bytes) -> tuple[int, int, int]:
    """(adc_T, adc_P, adc_H) from the 8 data bytes at 0xF7..0xFE."""
    adc_p = (data[0] << 12) | (data[1] << 4) | (data[2] >> 4)
    adc_t = (data[3] << 12) | (data[4] << 4) | (data[5] >> 4)
    return adc_t, adc_p, (data[6] << 8) | data[7]


class Bme280Sensor(Sensor):
    """A BME280 at ``address`` (0x76 or 0x77) on ``/dev/i2c-<bus>``; yields temperature (°C),
    pressure (hPa) and humidity (%). ``open_bus`` opens the bus (smbus2 unless a test gives a
    loopback chip)."""

    kind = "bme280"

    def __init__(self, name: str, *, bus: int = 1, address: int = 0x76,
                 open_bus: BusOpener | None = None):
        if address not in ADDRESSES:
            raise ValueError(f"a BME280 answers at 0x76 or 0x77, not 0x{address:02x}")
        self.name = name
        self.units = dict(UNITS)
        self.chip = I2CChip(bus, address, open_bus)
        self._calibration: Calibration | None = None

    def describe(self) -> str:
        return f"bme280 at {self.chip.where}"

    def read(self) -> dict[str, Reading]:
        try:
            calibration = self._calibration or self._identify()
            self._calibration = calibration
            adc_t, adc_p, adc_h = raw_values(self._measure())
        except SensorError:
            self._forget()
            raise
        if adc_t == SKIPPED_20BIT or adc_p == SKIPPED_20BIT or adc_h == SKIPPED_16BIT:
            self._forget()
            raise SensorError(f"the BME280 at {self.chip.where} skipped a measurement (it was "
                              "reset during the read?); the next read sets it up again")
        celsius, t_fine = compensate_temperature(calibration, adc_t)
        values = {"temperature": celsius,
                  "pressure": compensate_pressure(calibration, adc_p, t_fine) / 100.0,
                  "humidity": compensate_humidity(calibration, adc_h, t_fine)}
        return {q: Reading(q, round(v, 2), self.units[q]) for q, v in values.items()}

    def close(self) -> None:
        self._forget()

    def _forget(self) -> None:
        """Close the bus and read the chip id and calibration again next time (a replugged or
        replaced chip has its own)."""
        self._calibration = None
        self.chip.close()

    def _identify(self) -> Calibration:
        chip_id = self.chip.read_byte(REG_ID)
        if chip_id != CHIP_ID:
            what = OTHER_CHIPS.get(chip_id, "not a BME280")
            raise SensorUnavailable(f"the chip at {self.chip.where} has id 0x{chip_id:02x}, "
                                    f"{what}; a BME280 has 0x{CHIP_ID:02x}: check the address "
                                    "(`i2cdetect -y N`) and the part on the board")
        calibration = Calibration.from_registers(self.chip.read_block(REG_CALIB_TP, 26),
                                                 self.chip.read_block(REG_CALIB_H, 7))
        self.chip.write_byte(REG_CONFIG, 0x00)  # no IIR filter; written while asleep
        log.debug("sensor_opened sensor=%s chip=bme280 where=%r", self.name, self.chip.where)
        return calibration

    def _measure(self) -> bytes:
        self.chip.write_byte(REG_CTRL_HUM, CTRL_HUM)  # takes effect with the ctrl_meas write
        self.chip.write_byte(REG_CTRL_MEAS, CTRL_MEAS)
        time.sleep(MEASURE_SECONDS)
        deadline = time.monotonic() + MEASURE_TIMEOUT
        while self.chip.read_byte(REG_STATUS) & STATUS_BUSY:
            if time.monotonic() > deadline:
                raise SensorError(f"the BME280 at {self.chip.where} was still measuring after "
                                  f"{MEASURE_TIMEOUT:.1f} s; check its supply voltage")
            time.sleep(0.002)
        return self.chip.read_block(REG_DATA, 8)


class Bme280Options(SensorOptions):
    """A BME280 on I2C: yields temperature (°C), pressure (hPa) and humidity (%)."""

    bus: int = Field(default=1, ge=0)
    """/dev/i2c-N; 1 is the header's I2C (GPIO2 SDA, GPIO3 SCL)."""
    address: Annotated[Address, among(ADDRESSES, lambda address: f"0x{address:02x}: a BME280 "
                                      "answers at 0x76 (SDO to GND) or 0x77 (SDO to 3.3 V)")] = 0x76

    @property
    def units(self) -> dict[str, str]:
        return dict(UNITS)


def _build(name: str, options: Bme280Options, context: SensorContext) -> Sensor:
    return Bme280Sensor(name, bus=options.bus, address=options.address)


def _devices(options: Bme280Options) -> Sequence[DeviceNode]:
    return (bus_node(options.bus),)


SPEC = SensorSpec("bme280", Bme280Options, _build, _devices)
