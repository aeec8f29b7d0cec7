"""ADS1115: one single-shot conversion per read, on the chosen channel and gain, in volts, then
scale/offset; against a loopback chip at the smbus2 boundary."""

from __future__ import annotations

import pytest

from peripherals.exc import SensorError
from peripherals.sensors.ads1115 import Ads1115Sensor
from peripherals.sensors.base import Reading, Scaling
from tests.peripherals.sensors.chips import Ads1115Chip, LoopbackBus


def adc(chip: Ads1115Chip, channel: int = 0, **options) -> Ads1115Sensor:
    return Ads1115Sensor("soil", channel, open_bus=LoopbackBus({0x48: chip}).open, **options)


def test_a_read_converts_the_channel_once_and_returns_volts():
    chip = Ads1115Chip((0.1, 0.2, 1.65, 3.0), busy_reads=2)
    sensor = adc(chip, channel=2)
    assert sensor.read() == {"voltage": Reading("voltage", pytest.approx(1.65, abs=2e-4), "V")}
    assert chip.conversions == 1
    config = chip.configs[-1]
    assert config >> 15 == 1 and (config >> 12) & 0b111 == 0b110  # start; AIN2 against GND
    assert (config >> 8) & 1 == 1 and config & 0b11 == 0b11  # single shot; comparator off
    assert sensor.units == {"voltage": "V"} and sensor.quantities == ("voltage",)
    assert sensor.describe() == "ads1115 channel 2 at 0x48 on /dev/i2c-1"


@pytest.mark.parametrize("fsr,volts", [(6.144, 5.0), (4.096, 3.3), (2.048, 1.2), (0.256, 0.2)])
def test_the_gain_sets_the_full_scale_range(fsr, volts):
    chip = Ads1115Chip((volts, 0, 0, 0))
    reading = adc(chip, fsr=fsr).read()["voltage"]
    assert reading.value == pytest.approx(volts, abs=fsr / 32768)


def test_a_voltage_beyond_the_range_reads_full_scale():
    assert adc(Ads1115Chip((3.0, 0, 0, 0)), fsr=2.048).read()["voltage"].value == pytest.approx(2.048, abs=1e-4)


def test_scale_offset_unit_and_quantity_make_a_reading_mean_something():
    # a TMP36: 10 mV per degree, 0.5 V at 0 °C
    tmp36 = Scaling(scale=100, offset=-50, quantity="temperature", unit="°C")
    reading = adc(Ads1115Chip((0.713, 0, 0, 0)), scaling=tmp36).read()["temperature"]
    assert (round(reading.value, 1), reading.unit) == (21.3, "°C")


def test_a_chip_that_never_finishes_is_an_error():
    with pytest.raises(SensorError, match="did not finish a conversion within 0.2 s"):
        adc(Ads1115Chip(busy_reads=10**9)).read()


def test_no_chip_says_what_to_check():
    sensor = Ads1115Sensor("soil", 0, address=0x49, open_bus=LoopbackBus({0x48: Ads1115Chip()}).open)
    with pytest.raises(SensorError, match=r"no answer from 0x49 on /dev/i2c-1 .*i2cdetect -y 1"):
        sensor.read()


@pytest.mark.parametrize("options,message", [
    ({"channel": 4}, "channels are 0..3"),
    ({"channel": 0, "fsr": 5.0}, "fsr must be one of 6.144, 4.096"),
    ({"channel": 0, "data_rate": 100}, "data_rate must be one of 8, 16"),
    ({"channel": 0, "address": 0x50}, "0x48..0x4b, not 0x50"),
])
def test_impossible_settings_are_refused_at_construction(options, message):
    with pytest.raises(ValueError, match=message):
        Ads1115Sensor("soil", **options)
