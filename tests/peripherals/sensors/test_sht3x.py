"""SHT3x: the single-shot command and the six-byte reply against a loopback chip at the smbus2
boundary (plain I2C messages through i2c_rdwr), the datasheet's conversions and CRC-8, and errors
that say what to do."""

from __future__ import annotations

import pytest

from peripherals.exc import SensorError, SensorUnavailable
from peripherals.sensors.factory import create_sensor
from peripherals.sensors.i2c import crc8
from peripherals.sensors.sht3x import Sht3xSensor, celsius, relative_humidity
from tests.peripherals.sensors.chips import LoopbackBus, Sht3xChip


def sensor_on(bus: LoopbackBus, address: int = 0x44) -> Sht3xSensor:
    return Sht3xSensor("greenhouse", bus=1, address=address, open_bus=bus.open)


def test_the_crc_is_the_datasheets():
    assert crc8(bytes([0xBE, 0xEF])) == 0x92  # SHT3x datasheet 4.12
    assert crc8(bytes([0x00, 0x00])) == 0x81


def test_the_conversions_span_the_datasheets_range():
    assert (celsius(0), celsius(0xFFFF)) == (-45.0, 130.0)
    assert (relative_humidity(0), relative_humidity(0xFFFF)) == (0.0, 100.0)


def test_a_read_sends_the_single_shot_command_and_converts_the_reply():
    chip = Sht3xChip((0x6666, 0x8000))
    readings = sensor_on(LoopbackBus({0x44: chip})).read()
    assert chip.commands == [bytes([0x24, 0x00])]
    assert (readings["temperature"].value, readings["temperature"].unit) == (25.0, "°C")
    assert (readings["humidity"].value, readings["humidity"].unit) == (50.0, "%")


def test_the_second_address_is_read_there():
    chip = Sht3xChip((0x4000, 0x4000))
    readings = sensor_on(LoopbackBus({0x45: chip}), 0x45).read()
    assert readings["temperature"].value == round(-45 + 175 * 0x4000 / 65535, 2)


def test_a_chip_still_converting_is_asked_again():
    chip = Sht3xChip(busy_reads=2)
    assert sensor_on(LoopbackBus({0x44: chip})).read()["humidity"].value == 50.0


def test_a_word_whose_crc_does_not_match_fails_the_read():
    bus = LoopbackBus({0x44: Sht3xChip(corrupt=True)})
    with pytest.raises(SensorError, match=r"CRC mismatch .* 0x44 on /dev/i2c-1 .*noise on the bus"):
        sensor_on(bus).read()


def test_no_chip_at_the_address_names_the_wiring_and_i2cdetect():
    with pytest.raises(SensorError, match=r"no answer from 0x44 on /dev/i2c-1 .*i2cdetect -y 1"):
        sensor_on(LoopbackBus({})).read()


def test_a_missing_bus_says_how_to_enable_i2c():
    def no_bus(number: int):
        raise FileNotFoundError(2, "No such file or directory")

    with pytest.raises(SensorUnavailable, match="no /dev/i2c-1: enable I2C"):
        Sht3xSensor("s", open_bus=no_bus).read()


def test_only_its_two_addresses_are_accepted():
    with pytest.raises(ValueError, match=r"0x40: an SHT3x answers at 0x44 \(ADDR to GND\) or 0x45"):
        create_sensor("s", "sht3x", {"address": "0x40"})
    assert create_sensor("s", "sht3x", {"address": "0x45"}).describe() == "sht3x at 0x45 on /dev/i2c-1"
