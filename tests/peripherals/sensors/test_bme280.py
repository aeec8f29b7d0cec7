"""BME280: the compensation maths against the datasheet's worked example, and the driver's real
register traffic against a loopback chip at the smbus2 boundary (ids, calibration, forced mode,
errors that say what to do, recovery after a failure)."""

from __future__ import annotations

import pytest

from peripherals.exc import SensorError, SensorUnavailable
from peripherals.sensors.bme280 import (
    Bme280Sensor,
    Calibration,
    compensate_humidity,
    compensate_pressure,
    compensate_temperature,
)
from tests.peripherals.sensors.chips import ADC_H, ADC_P, ADC_T, DATASHEET, Bme280Chip, LoopbackBus, bme280_registers


def humidity_int32(cal: Calibration, adc_h: int, t_fine: int) -> float:
    """The datasheet's own 32-bit integer humidity formula (BME280 datasheet 4.2.3), as an
    independent reference: %RH in Q22.10."""
    v = t_fine - 76800
    v = (((((adc_h << 14) - (cal.h4 << 20) - (cal.h5 * v)) + 16384) >> 15)
         * (((((((v * cal.h6) >> 10) * (((v * cal.h3) >> 11) + 32768)) >> 10) + 2097152)
             * cal.h2 + 8192) >> 14))
    v = v - (((((v >> 15) * (v >> 15)) >> 7) * cal.h1) >> 4)
    v = min(max(v, 0), 419430400)
    return (v >> 12) / 1024.0


def temperature_int32(cal: Calibration, adc_t: int) -> tuple[int, int]:
    """The datasheet's 32-bit integer temperature formula: (0.01 °C, t_fine)."""
    var1 = (((adc_t >> 3) - (cal.t1 << 1)) * cal.t2) >> 11
    var2 = (((((adc_t >> 4) - cal.t1) * ((adc_t >> 4) - cal.t1)) >> 12) * cal.t3) >> 14
    t_fine = var1 + var2
    return (t_fine * 5 + 128) >> 8, t_fine


def sensor_on(bus: LoopbackBus, address: int = 0x76) -> Bme280Sensor:
    return Bme280Sensor("greenhouse", bus=1, address=address, open_bus=bus.open)


# the datasheet's worked example --------------------------------------------------------------

def test_temperature_of_the_worked_example_is_25_08_degrees():
    celsius, t_fine = compensate_temperature(DATASHEET, ADC_T)
    assert round(celsius, 2) == 25.08
    assert int(t_fine) == 128422
    assert temperature_int32(DATASHEET, ADC_T) == (2508, 128422)  # the integer formula agrees


def test_pressure_of_the_worked_example_is_100653_27_pascal():
    _, t_fine = compensate_temperature(DATASHEET, ADC_T)
    assert round(compensate_pressure(DATASHEET, ADC_P, t_fine), 2) == 100653.27


def test_humidity_agrees_with_the_datasheets_integer_formula():
    for adc_t in (400000, ADC_T, 600000):
        for adc_h in (20000, ADC_H, 30000, 35000):
            _, t_fine = compensate_temperature(DATASHEET, adc_t)
            expected = humidity_int32(DATASHEET, adc_h, int(t_fine))
            assert compensate_humidity(DATASHEET, adc_h, t_fine) == pytest.approx(expected, abs=0.02)


def test_humidity_is_clamped_to_0_and_100_percent():
    _, t_fine = compensate_temperature(DATASHEET, ADC_T)
    assert compensate_humidity(DATASHEET, 0, t_fine) == 0.0
    assert compensate_humidity(DATASHEET, 65535, t_fine) == 100.0


def test_calibration_registers_decode_signed_words_and_the_split_h4_h5():
    odd = Calibration(t1=65000, t2=-20000, t3=-1, p1=40000, p2=-32768, p3=32767, p4=-5, p5=-6,
                      p6=-7, p7=-8, p8=-9, p9=-10, h1=255, h2=-300, h3=200, h4=-1234, h5=-987,
                      h6=-100)
    regs = bme280_registers(odd)
    tp = bytes(regs.get(0x88 + i, 0) for i in range(26))
    h = bytes(regs[0xE1 + i] for i in range(7))
    assert Calibration.from_registers(tp, h) == odd


# the driver on a loopback chip -----------------------------------------------------------------

def test_a_read_measures_once_in_forced_mode_and_compensates():
    chip = Bme280Chip(busy_reads=3)
    sensor = sensor_on(LoopbackBus({0x76: chip}))
    readings = sensor.read()
    assert {q: (r.value, r.unit) for q, r in readings.items()} == {
        "temperature": (25.08, "°C"),
        "pressure": (1006.53, "hPa"),
        "humidity": (pytest.approx(humidity_int32(DATASHEET, ADC_H, 128422), abs=0.02), "%"),
    }
    assert chip.measurements == 1
    assert chip.regs[0xF2] == 0b001 and chip.regs[0xF5] == 0x00
    assert sensor.quantities == ("temperature", "pressure", "humidity")
    assert sensor.describe() == "bme280 at 0x76 on /dev/i2c-1"


def test_calibration_is_read_once_and_every_read_measures_again():
    chip = Bme280Chip()
    sensor = sensor_on(LoopbackBus({0x77: chip}), address=0x77)
    sensor.read()
    chip.raw = (ADC_T + 20000, ADC_P, ADC_H)
    warmer = sensor.read()["temperature"].value
    assert warmer > 25.08 and chip.measurements == 2


def test_a_bmp280_at_the_address_is_named_and_refused():
    sensor = sensor_on(LoopbackBus({0x76: Bme280Chip(chip_id=0x58)}))
    with pytest.raises(SensorUnavailable, match=r"id 0x58, a BMP280 \(no humidity\); a BME280 has "
                                                r"0x60: check the address \(`i2cdetect"):
        sensor.read()


def test_no_chip_at_the_address_says_to_check_wiring_and_address():
    sensor = sensor_on(LoopbackBus({}))
    with pytest.raises(SensorError, match=r"no answer from 0x76 on /dev/i2c-1 .*check the wiring "
                                          r"\(SDA, SCL, 3.3 V, GND\).*i2cdetect -y 1"):
        sensor.read()


def test_a_missing_bus_says_to_enable_i2c():
    def no_bus(bus: int):
        raise FileNotFoundError(2, "No such file or directory")

    with pytest.raises(SensorUnavailable, match=r"no /dev/i2c-1: enable I2C with `sudo raspi-config "
                                                r"nonint do_i2c 0`"):
        Bme280Sensor("greenhouse", open_bus=no_bus).read()


def test_no_permission_says_to_join_the_i2c_group():
    def forbidden(bus: int):
        raise PermissionError(13, "Permission denied")

    with pytest.raises(SensorUnavailable, match="add the agent's user to the i2c group"):
        Bme280Sensor("greenhouse", open_bus=forbidden).read()


def test_a_chip_plugged_in_after_a_failure_is_set_up_again():
    bus = LoopbackBus({})
    sensor = sensor_on(bus)
    with pytest.raises(SensorError):
        sensor.read()
    assert bus.closed
    bus.chips[0x76] = Bme280Chip()
    assert sensor.read()["temperature"].value == 25.08
    assert bus.opened == 2


def test_a_chip_that_never_finishes_measuring_is_an_error():
    sensor = sensor_on(LoopbackBus({0x76: Bme280Chip(busy_reads=10**9)}))
    with pytest.raises(SensorError, match="still measuring after 0.2 s; check its supply voltage"):
        sensor.read()


def test_close_releases_the_bus():
    bus = LoopbackBus({0x76: Bme280Chip()})
    sensor = sensor_on(bus)
    sensor.read()
    sensor.close()
    assert bus.closed


def test_an_address_other_than_0x76_or_0x77_is_refused_at_construction():
    with pytest.raises(ValueError, match="0x76 or 0x77, not 0x40"):
        Bme280Sensor("x", address=0x40)
