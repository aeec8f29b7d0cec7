"""DS18B20 over the kernel's w1 sysfs: good readings, CRC failures, the 85 °C power-on value and
zeros retried once then refused, one device or the one named, and errors that say what to do."""

from __future__ import annotations

import logging

import pytest

from peripherals.exc import SensorError, SensorUnavailable
from peripherals.sensors.base import Reading
from peripherals.sensors.w1 import Ds18b20Sensor, find_devices

WATER, AIR = "28-00000a1b2c3d", "28-0316a27914ff"


def thermometer(sysfs, device: str | None = None) -> Ds18b20Sensor:
    return Ds18b20Sensor("water", device, root=sysfs.root)


def test_the_only_thermometer_on_the_bus_is_read(sysfs):
    sysfs.ds18b20(WATER, "23125")
    sensor = thermometer(sysfs)
    assert sensor.read() == {"temperature": Reading("temperature", 23.125, "°C")}
    assert sensor.quantities == ("temperature",)
    assert sensor.describe() == f"ds18b20 {WATER}"


def test_below_zero(sysfs):
    sysfs.ds18b20(WATER, "-10062")
    assert thermometer(sysfs).read()["temperature"].value == -10.062


def test_the_newer_temperature_file_is_read_when_there_is_no_w1_slave(sysfs):
    sysfs.write(f"sys/bus/w1/devices/{WATER}/temperature", "19500\n")
    assert thermometer(sysfs).read()["temperature"].value == 19.5


def test_the_power_on_value_in_the_temperature_file_is_refused(sysfs):
    sysfs.write(f"sys/bus/w1/devices/{WATER}/temperature", "85000\n")
    with pytest.raises(SensorError, match=r"85.000 °C is the DS18B20's power-on value.*wire VDD "
                                          r"to 3.3 V\) \(twice in a row\)"):
        thermometer(sysfs).read()


def test_a_crc_failure_is_retried_once_and_the_good_reading_kept(sysfs, caplog):
    served = sysfs.ds18b20_sequence(WATER, "99999 NO", "21500")
    with caplog.at_level(logging.INFO, logger="peripherals.sensors.w1"):
        assert thermometer(sysfs).read()["temperature"].value == 21.5
    assert served == ["99999 NO", "21500"]
    assert f"sensor_retry sensor=water device={WATER} reason='CRC check failed" in caplog.text


def test_a_crc_failure_twice_is_an_error_that_says_what_to_check(sysfs):
    served = sysfs.ds18b20_sequence(WATER, "23125 NO")
    with pytest.raises(SensorError, match=r"CRC check failed .*noise on the data line; check the "
                                          r"wiring: .*4.7 kΩ pull-up.*\(twice in a row\)"):
        thermometer(sysfs).read()
    assert served == ["23125 NO", "23125 NO"]


def test_the_85000_power_on_value_is_retried_then_refused(sysfs):
    served = sysfs.ds18b20_sequence(WATER, "85000", "85000", "22000")
    with pytest.raises(SensorError, match="power-on value"):
        thermometer(sysfs).read()
    assert len(served) == 2
    assert thermometer(sysfs).read()["temperature"].value == 22.0  # the next poll recovers


def test_a_scratchpad_of_zeros_is_not_zero_degrees(sysfs):
    sysfs.ds18b20(WATER, "zeros")
    with pytest.raises(SensorError, match=r"answered with zeros \(no sensor on the line\?\)"):
        thermometer(sysfs).read()


def test_several_thermometers_need_a_device_and_the_error_lists_them(sysfs):
    sysfs.ds18b20(WATER, "23125")
    sysfs.ds18b20(AIR, "18000")
    with pytest.raises(SensorUnavailable, match=rf"several DS18B20 on the 1-Wire bus \({WATER}, "
                                                rf"{AIR}\): set device = \"28-...\""):
        thermometer(sysfs).read()
    assert thermometer(sysfs, AIR).read()["temperature"].value == 18.0
    assert find_devices(sysfs.root) == [WATER, AIR]  # not w1_bus_master1


def test_a_named_device_that_is_absent_lists_those_present(sysfs):
    sysfs.ds18b20(AIR, "18000")
    with pytest.raises(SensorError, match=rf"{WATER} is not on the 1-Wire bus \(found: {AIR}\)"):
        thermometer(sysfs, WATER).read()


def test_an_empty_bus_says_to_check_the_wiring(sysfs):
    sysfs.w1_bus()
    with pytest.raises(SensorError, match=r"no DS18B20 on the 1-Wire bus; check the wiring: data "
                                          r"to the 1-Wire GPIO \(GPIO4 by default\)"):
        thermometer(sysfs).read()


def test_no_1wire_bus_says_how_to_enable_it(sysfs):
    with pytest.raises(SensorUnavailable, match=r"enable 1-Wire: add dtoverlay=w1-gpio to "
                                                r"/boot/firmware/config.txt"):
        thermometer(sysfs).read()


def test_a_thermometer_that_leaves_the_bus_is_found_again_when_it_returns(sysfs):
    folder = sysfs.ds18b20(WATER, "23125").parent
    sensor = thermometer(sysfs)
    sensor.read()
    (folder / "w1_slave").unlink()
    folder.rmdir()
    with pytest.raises(SensorError, match="no DS18B20 on the 1-Wire bus"):
        sensor.read()
    sysfs.ds18b20(WATER, "24000")
    assert sensor.read()["temperature"].value == 24.0
