"""TI ADS1115 16-bit ADC on I2C: one single-shot conversion per read, single-ended.

The chip's registers are 16 bits wide and sent most significant byte first; they are read and
written as SMBus words (byte-swapped), which is also how the kernel's own driver and i2c-stub
see them. The programmable gain is chosen by its full-scale range in volts:

>>> hex(config_word(channel=2, fsr=4.096, data_rate=128))
'0xe383'
>>> volts(0x4000, fsr=4.096), volts(0xC000, fsr=4.096)
(2.048, -2.048)
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Annotated, Literal

from pydantic import Field

from peripherals.base import DeviceNode
from peripherals.exc import SensorError
from peripherals.options import among
from peripherals.sensors.base import VOLTS, Reading, ScaledOptions, Scaling, Sensor, SensorContext, SensorSpec
from peripherals.sensors.i2c import Address, BusOpener, I2CChip, bus_node

ADDRESSES = (0x48, 0x49, 0x4A, 0x4B)
"""ADDR pin to GND, VDD, SDA, SCL."""
CHANNELS = (0, 1, 2, 3)
GAINS = {6.144: 0b000, 4.096: 0b001, 2.048: 0b010, 1.024: 0b011, 0.512: 0b100, 0.256: 0b101}
"""Full-scale range in volts -> PGA bits. Inputs never go beyond VDD + 0.3 V whatever the FSR."""
DATA_RATES = {8: 0, 16: 1, 32: 2, 64: 3, 128: 4, 250: 5, 475: 6, 860: 7}
"""Samples per second -> DR bits; a single shot takes one sample period."""

REG_CONVERSION, REG_CONFIG = 0x00, 0x01
OS_START = 1 << 15           # write: start a conversion; read: 1 when idle (conversion done)
MUX_SINGLE = 0b100           # AINx against GND, x added
MODE_SINGLE = 1 << 8
COMP_DISABLE = 0b11
READY_TIMEOUT = 0.2


def config_word(channel: int, fsr: float, data_rate: int) -> int:
    """The config register value that starts one conversion of ``channel`` against GND."""
    return (OS_START | (MUX_SINGLE + channel) << 12 | GAINS[fsr] << 9 | MODE_SINGLE
            | DATA_RATES[data_rate] << 5 | COMP_DISABLE)


def volts(raw: int, fsr: float) -> float:
    """A conversion register value (two's complement) in volts."""
    signed = raw - 0x10000 if raw & 0x8000 else raw
    return signed * fsr / 32768


class Ads1115Sensor(Sensor):
    """Channel ``channel`` (0..3, against GND) of an ADS1115 at ``address`` on
    ``/dev/i2c-<bus>``; yields one quantity, ``volts * scale + offset`` in ``unit``.

    ``fsr`` is the full-scale range in volts (the gain), ``data_rate`` the samples per second
    (128: a read takes about 8 ms)."""

    kind = "ads1115"

    def __init__(self, name: str, channel: int, *, bus: int = 1, address: int = 0x48,
                 fsr: float = 4.096, data_rate: int = 128, scaling: Scaling = VOLTS,
                 open_bus: BusOpener | None = None):
        if channel not in CHANNELS:
            raise ValueError(f"ADS1115 channels are 0..3, not {channel}")
        if address not in ADDRESSES:
            raise ValueError(f"an ADS1115 answers at 0x48..0x4b, not 0x{address:02x}")
        if fsr not in GAINS:
            raise ValueError(f"fsr must be one of {', '.join(map(str, GAINS))} volts, not {fsr}")
        if data_rate not in DATA_RATES:
            raise ValueError(f"data_rate must be one of {', '.join(map(str, DATA_RATES))}")
        self.name, self.channel, self.fsr, self.data_rate = name, channel, fsr, data_rate
        self.scaling = scaling
        self.units = {scaling.quantity: scaling.unit}
        self.chip = I2CChip(bus, address, open_bus)

    def describe(self) -> str:
        return f"ads1115 channel {self.channel} at {self.chip.where}"

    def read(self) -> dict[str, Reading]:
        reading = self.scaling.reading(self.read_volts())
        return {reading.quantity: reading}

    def read_volts(self) -> float:
        """One conversion, in volts."""
        self.chip.write_word_be(REG_CONFIG, config_word(self.channel, self.fsr, self.data_rate))
        time.sleep(1.0 / self.data_rate + 0.0005)
        deadline = time.monotonic() + READY_TIMEOUT
        while not self.chip.read_word_be(REG_CONFIG) & OS_START:
            if time.monotonic() > deadline:
                self.chip.close()
                raise SensorError(f"the ADS1115 at {self.chip.where} did not finish a conversion "
                                  f"within {READY_TIMEOUT:.1f} s; check its supply voltage")
            time.sleep(0.001)
        return volts(self.chip.read_word_be(REG_CONVERSION), self.fsr)

    def close(self) -> None:
        self.chip.close()


class Ads1115Options(ScaledOptions):
    """One channel of an ADS1115 ADC on I2C, against GND: volts, then scale/offset."""

    channel: int = Field(ge=0, le=3)
    bus: int = Field(default=1, ge=0)
    address: Annotated[Address, among(ADDRESSES, lambda address: f"0x{address:02x}: an ADS1115 "
                                      "answers at 0x48 (ADDR to GND), 0x49 (VDD), 0x4a (SDA) or "
                                      "0x4b (SCL)")] = 0x48
    fsr: Annotated[float, among(GAINS, lambda fsr: f"{fsr} V is not a range the ADS1115 has; use "
                                f"one of {', '.join(map(str, GAINS))}")] = 4.096
    """Full-scale range in volts (the gain): 6.144, 4.096, 2.048, 1.024, 0.512 or 0.256; inputs
    never go above VDD whatever it says."""
    data_rate: Literal[8, 16, 32, 64, 128, 250, 475, 860] = 128
    """Samples per second; one conversion takes one sample period."""


def _build(name: str, options: Ads1115Options, context: SensorContext) -> Sensor:
    return Ads1115Sensor(name, options.channel, bus=options.bus, address=options.address,
                         fsr=options.fsr, data_rate=options.data_rate, scaling=options.scaling)


def _devices(options: Ads1115Options) -> Sequence[DeviceNode]:
    return (bus_node(options.bus),)


SPEC = SensorSpec("ads1115", Ads1115Options, _build, _devices)
