"""Loopback I2C chips at the smbus2 boundary: a bus object with smbus2's methods whose chips keep
registers and behave like the datasheets say (a BME280 measures when put in forced mode, an
ADS1115 converts when OS is written), so the drivers' real register traffic and maths run.

``bme280_registers`` is also what the kernel test writes into i2c-stub.
"""

from __future__ import annotations

import errno
from dataclasses import astuple
from typing import Any

from peripherals.sensors.bme280 import Calibration
from peripherals.sensors.i2c import crc8

DATASHEET = Calibration(t1=27504, t2=26435, t3=-1000, p1=36477, p2=-10685, p3=3024, p4=2855,
                        p5=140, p6=-7, p7=15500, p8=-14600, p9=6000,
                        h1=75, h2=362, h3=0, h4=333, h5=0, h6=30)
"""The worked example's trimming (BMP280 datasheet 3.12, the same temperature and pressure
formulas as the BME280's), with plausible humidity trimming: no datasheet works humidity
through."""
ADC_T, ADC_P, ADC_H = 519888, 415148, 25000


def bme280_registers(cal: Calibration = DATASHEET, chip_id: int = 0x60) -> dict[int, int]:
    """Register -> byte for the chip id and the calibration (table 16 of the datasheet)."""
    regs = {0xD0: chip_id}
    words = astuple(cal)[:12]
    for i, word in enumerate(words):
        low, high = (word & 0xFFFF).to_bytes(2, "little")
        regs[0x88 + 2 * i], regs[0x89 + 2 * i] = low, high
    regs[0xA1] = cal.h1
    regs[0xE1], regs[0xE2] = (cal.h2 & 0xFFFF).to_bytes(2, "little")
    regs[0xE3] = cal.h3
    regs[0xE4] = (cal.h4 >> 4) & 0xFF
    regs[0xE5] = (cal.h4 & 0x0F) | ((cal.h5 & 0x0F) << 4)
    regs[0xE6] = (cal.h5 >> 4) & 0xFF
    regs[0xE7] = cal.h6 & 0xFF
    return regs


def bme280_data(adc_t: int = ADC_T, adc_p: int = ADC_P, adc_h: int = ADC_H) -> dict[int, int]:
    """The eight data registers 0xF7..0xFE holding these raw values."""
    data = [adc_p >> 12, (adc_p >> 4) & 0xFF, (adc_p & 0x0F) << 4,
            adc_t >> 12, (adc_t >> 4) & 0xFF, (adc_t & 0x0F) << 4,
            adc_h >> 8, adc_h & 0xFF]
    return {0xF7 + i: byte for i, byte in enumerate(data)}


class Bme280Chip:
    """A BME280: data registers hold the 'skipped' value 0x80000 until a forced measurement
    (ctrl_meas mode 01) loads ``raw``; status says measuring for ``busy_reads`` reads."""

    def __init__(self, cal: Calibration = DATASHEET, *, chip_id: int = 0x60,
                 raw: tuple[int, int, int] = (ADC_T, ADC_P, ADC_H), busy_reads: int = 1):
        self.regs = [0] * 256
        for register, value in bme280_registers(cal, chip_id).items():
            self.regs[register] = value
        for register, value in bme280_data(0x80000, 0x80000, 0x8000).items():
            self.regs[register] = value
        self.raw, self.busy_reads, self.measurements = raw, busy_reads, 0
        self._busy = 0

    def read(self, register: int) -> int:
        if register == 0xF3:
            busy, self._busy = self._busy > 0, max(0, self._busy - 1)
            return 0b1000 if busy else 0
        return self.regs[register]

    def write(self, register: int, value: int) -> None:
        self.regs[register] = value
        if register == 0xF4 and value & 0b11 in (0b01, 0b10):  # forced mode: one measurement
            self.measurements += 1
            humidity_on = self.regs[0xF2] & 0b111
            adc_t, adc_p, adc_h = self.raw
            for reg, byte in bme280_data(adc_t, adc_p, adc_h if humidity_on else 0x8000).items():
                self.regs[reg] = byte
            self.regs[0xF4] = value & ~0b11  # back to sleep
            self._busy = self.busy_reads


class Ads1115Chip:
    """An ADS1115: ``volts[channel]`` on AIN0..3; writing OS=1 in single-shot mode converts the
    selected channel at the selected gain; OS reads 0 for ``busy_reads`` reads meanwhile."""

    FSR = {0: 6.144, 1: 4.096, 2: 2.048, 3: 1.024, 4: 0.512, 5: 0.256, 6: 0.256, 7: 0.256}

    def __init__(self, volts: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0), *,
                 busy_reads: int = 1):
        self.volts = list(volts)
        self.words = {0x00: 0x0000, 0x01: 0x8583}  # reset values
        self.busy_reads, self.conversions = busy_reads, 0
        self.configs: list[int] = []
        self._busy = 0

    def read_word(self, register: int) -> int:
        """The register as the chip sends it (MSB first), i.e. byte-swapped as an SMBus word."""
        value = self.words[register]
        if register == 0x01 and self._busy:
            self._busy -= 1
            value &= 0x7FFF
        return ((value & 0xFF) << 8) | (value >> 8)

    def write_word(self, register: int, word: int) -> None:
        value = ((word & 0xFF) << 8) | (word >> 8)
        self.words[register] = value
        if register == 0x01:
            self.configs.append(value)
            if value & 0x8000 and value & 0x0100:
                mux, pga = (value >> 12) & 0b111, (value >> 9) & 0b111
                assert mux >= 0b100, "only single-ended inputs are wired"
                fsr = self.FSR[pga]
                code = max(-32768, min(32767, round(self.volts[mux - 0b100] / fsr * 32768)))
                self.words[0x00] = code & 0xFFFF
                self.conversions += 1
                self._busy = self.busy_reads


def with_crc(word: int) -> list[int]:
    """A 16-bit word as Sensirion chips send it: two bytes, then their CRC-8."""
    data = word.to_bytes(2, "big")
    return [*data, crc8(data)]


class Sht3xChip:
    """An SHT3x: the single-shot command 0x2400 starts a measurement of ``words`` (temperature,
    humidity); a read while it converts (the first ``busy_reads`` reads) is not acknowledged;
    ``corrupt`` flips a bit of the humidity word after its CRC was computed."""

    def __init__(self, words: tuple[int, int] = (0x6666, 0x8000), *, busy_reads: int = 0,
                 corrupt: bool = False):
        self.words, self.busy_reads, self.corrupt = words, busy_reads, corrupt
        self.commands: list[bytes] = []
        self._result: list[int] | None = None
        self._busy = 0

    def command(self, data: bytes) -> None:
        self.commands.append(data)
        if data == bytes([0x24, 0x00]):
            temperature, humidity = self.words
            self._result = with_crc(temperature) + with_crc(humidity)
            if self.corrupt:
                self._result[3] ^= 0x01
            self._busy = self.busy_reads

    def reply(self, length: int) -> list[int]:
        if self._result is None or self._busy:
            self._busy = max(0, self._busy - 1)
            raise OSError(errno.EREMOTEIO, "Remote I/O error")  # NACK: nothing to read yet
        result, self._result = self._result, None
        return result[:length]


class Aht20Chip:
    """An AHT20: the status byte's calibration bit is clear until 0xBE 0x08 0x00; 0xAC 0x33 0x00
    measures ``raw`` (humidity, temperature: 20 bits each), busy for ``busy_reads`` reads."""

    def __init__(self, raw: tuple[int, int] = (0x80000, 0x5999A), *, calibrated: bool = False,
                 busy_reads: int = 0, corrupt: bool = False):
        self.raw, self.calibrated, self.busy_reads, self.corrupt = raw, calibrated, busy_reads, corrupt
        self.commands: list[bytes] = []
        self.measurements = 0
        self._busy = 0

    def command(self, data: bytes) -> None:
        self.commands.append(data)
        if data == bytes([0xBE, 0x08, 0x00]):
            self.calibrated = True
        elif data == bytes([0xAC, 0x33, 0x00]):
            self.measurements += 1
            self._busy = self.busy_reads

    def reply(self, length: int) -> list[int]:
        status = (0x80 if self._busy else 0) | (0x08 if self.calibrated else 0) | 0x10
        self._busy = max(0, self._busy - 1)
        humidity, temperature = self.raw
        frame = [status, humidity >> 12, (humidity >> 4) & 0xFF,
                 ((humidity & 0x0F) << 4) | (temperature >> 16), (temperature >> 8) & 0xFF,
                 temperature & 0xFF]
        frame.append(crc8(bytes(frame)) ^ (0x01 if self.corrupt else 0))
        return frame[:length]


class LoopbackBus:
    """A bus with smbus2's methods over the chips it holds (by address). An address with no
    chip does not answer, as on a real bus (EREMOTEIO)."""

    def __init__(self, chips: dict[int, Any]):
        self.chips = chips
        self.closed = False
        self.opened = 0

    def open(self, bus: int) -> LoopbackBus:
        """Use as ``open_bus``: every open hands out this bus again."""
        self.opened += 1
        self.closed = False
        return self

    def _chip(self, address: int) -> Any:
        if self.closed:
            raise OSError(errno.EBADF, "bus closed")
        if address not in self.chips:
            raise OSError(errno.EREMOTEIO, "Remote I/O error")
        return self.chips[address]

    def read_byte_data(self, address: int, register: int, force: bool | None = None) -> int:
        return int(self._chip(address).read(register))

    def write_byte_data(self, address: int, register: int, value: int,
                        force: bool | None = None) -> None:
        self._chip(address).write(register, value)

    def read_i2c_block_data(self, address: int, register: int, length: int,
                            force: bool | None = None) -> list[int]:
        chip = self._chip(address)
        return [chip.read(register + i) for i in range(length)]

    def read_word_data(self, address: int, register: int, force: bool | None = None) -> int:
        return int(self._chip(address).read_word(register))

    def write_word_data(self, address: int, register: int, value: int,
                        force: bool | None = None) -> None:
        self._chip(address).write_word(register, value)

    def i2c_rdwr(self, *messages: Any) -> None:
        """Plain I2C messages (smbus2's i2c_msg): a write is a command to the chip, a read is
        filled from its reply."""
        for message in messages:
            chip = self._chip(message.addr)
            if message.flags & 0x0001:  # I2C_M_RD
                for index, byte in enumerate(chip.reply(message.len)):
                    message.buf[index] = bytes([byte])
            else:
                chip.command(bytes(message))

    def close(self) -> None:
        self.closed = True
