"""AHT20: calibration, trigger, busy status and the seven-byte reply with its CRC, against a
loopback chip at the smbus2 boundary (plain I2C messages through i2c_rdwr)."""

from __future__ import annotations

import pytest

from peripherals.exc import SensorError
from peripherals.sensors.aht20 import Aht20Sensor
from tests.peripherals.sensors.chips import Aht20Chip, LoopbackBus

INITIALISE, TRIGGER = bytes([0xBE, 0x08, 0x00]), bytes([0xAC, 0x33, 0x00])


def sensor_on(bus: LoopbackBus) -> Aht20Sensor:
    return Aht20Sensor("greenhouse", bus=1, open_bus=bus.open)


def test_an_uncalibrated_chip_is_initialised_once_then_measured():
    chip = Aht20Chip((0x80000, 0x5999A))
    sensor = sensor_on(LoopbackBus({0x38: chip}))
    first, second = sensor.read(), sensor.read()
    assert chip.commands == [INITIALISE, TRIGGER, TRIGGER]
    assert first == second
    assert (first["humidity"].value, first["humidity"].unit) == (50.0, "%")
    assert (first["temperature"].value, first["temperature"].unit) == (20.0, "°C")


def test_a_calibrated_chip_is_not_initialised_again():
    chip = Aht20Chip(calibrated=True)
    sensor_on(LoopbackBus({0x38: chip})).read()
    assert chip.commands == [TRIGGER]


def test_the_extremes_of_the_20_bit_words():
    readings = sensor_on(LoopbackBus({0x38: Aht20Chip((0, 0), calibrated=True)})).read()
    assert (readings["humidity"].value, readings["temperature"].value) == (0.0, -50.0)


def test_a_busy_result_is_read_again():
    chip = Aht20Chip(calibrated=True, busy_reads=2)
    assert sensor_on(LoopbackBus({0x38: chip})).read()["humidity"].value == 50.0
    assert chip.measurements == 1


def test_a_chip_that_stays_busy_fails_the_read_naming_the_supply():
    chip = Aht20Chip(calibrated=True, busy_reads=100)
    with pytest.raises(SensorError, match=r"still measuring .*supply voltage"):
        sensor_on(LoopbackBus({0x38: chip})).read()


def test_a_reply_whose_crc_does_not_match_fails_the_read():
    with pytest.raises(SensorError, match=r"CRC mismatch .*0x38 on /dev/i2c-1"):
        sensor_on(LoopbackBus({0x38: Aht20Chip(corrupt=True)})).read()


def test_a_replugged_chip_is_checked_again_after_a_failure():
    chip = Aht20Chip()
    bus = LoopbackBus({})
    sensor = sensor_on(bus)
    with pytest.raises(SensorError, match="no answer from 0x38"):
        sensor.read()
    bus.chips[0x38] = chip
    assert sensor.read()["temperature"].value == 20.0
    assert chip.commands[0] == INITIALISE
