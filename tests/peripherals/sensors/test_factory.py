"""create_sensor builds each driver from its validated options; every driver is a Sensor whose
quantities are known before it touches the hardware."""

from __future__ import annotations

import pytest

from peripherals.sensors.base import Sensor
from peripherals.sensors.factory import create_sensor

OPTIONS = {
    "pi": {},
    "ds18b20": {"device": "28-00000a1b2c3d"},
    "bme280": {"bus": 3, "address": 0x77},
    "ads1115": {"channel": 1, "bus": 1, "address": 0x48, "fsr": 4.096, "data_rate": 128,
                "scale": 2.0, "offset": 0.0, "quantity": "level", "unit": "cm"},
    "mcp3008": {"channel": 5, "port": 0, "device": 1, "select_pin": None, "vref": 3.3,
                "scale": 1.0, "offset": 0.0, "quantity": "voltage", "unit": "V"},
    "dht22": {"device": "iio:device1", "iio_root": "/sys/bus/iio/devices", "attempts": 2,
              "retry_seconds": 1.5},
    "sht3x": {"bus": 1, "address": 0x45},
    "aht20": {"bus": 4},
    "hcsr04": {"echo_pin": "GPIO24", "trigger_pin": "GPIO23", "max_distance": 300,
               "empty_distance": 120, "full_distance": 20},
    "pulse_counter": {"pin": "GPIO17", "pulses_per_litre": 450, "pull_up": True,
                      "state_file": None},
}


@pytest.mark.parametrize("kind", OPTIONS)
def test_each_type_builds_without_touching_the_hardware(kind, tmp_path):
    sensor = create_sensor("s", kind, OPTIONS[kind], root=tmp_path)
    assert isinstance(sensor, Sensor)
    assert (sensor.name, sensor.kind) == ("s", kind)
    assert sensor.quantities == tuple(sensor.units) and sensor.quantities
    sensor.close()  # nothing opened: nothing to release


def test_where_each_one_is_for_status(tmp_path):
    describe = {kind: create_sensor("s", kind, OPTIONS[kind], root=tmp_path).describe()
                for kind in OPTIONS}
    assert describe["bme280"] == "bme280 at 0x77 on /dev/i2c-3"
    assert describe["ads1115"] == "ads1115 channel 1 at 0x48 on /dev/i2c-1"
    assert describe["mcp3008"] == "mcp3008 channel 5 on SPI0 CE1"
    assert describe["ds18b20"] == "ds18b20 28-00000a1b2c3d"
    assert describe["dht22"] == "dht22 iio:device1"
    assert describe["sht3x"] == "sht3x at 0x45 on /dev/i2c-1"
    assert describe["aht20"] == "aht20 at 0x38 on /dev/i2c-4"
    assert describe["hcsr04"] == "hcsr04 echo GPIO24 trigger GPIO23"
    assert describe["pulse_counter"] == "pulse_counter on GPIO17"


def test_what_the_first_sensors_people_buy_yield(tmp_path):
    units = {kind: create_sensor("s", kind, OPTIONS[kind], root=tmp_path).units
             for kind in ("dht22", "sht3x", "aht20", "hcsr04", "pulse_counter")}
    assert units == {"dht22": {"temperature": "°C", "humidity": "%"},
                     "sht3x": {"temperature": "°C", "humidity": "%"},
                     "aht20": {"temperature": "°C", "humidity": "%"},
                     "hcsr04": {"distance": "cm", "level": "%"},
                     "pulse_counter": {"water": "L", "flow_rate": "L/min"}}


def test_an_analog_pin_is_read_through_its_board_not_built_here():
    with pytest.raises(ValueError, match=r"read through its board \(uno:A0\)"):
        create_sensor("tank", "analog", {"pin": "uno:A0"})


def test_an_unknown_type_is_refused():
    with pytest.raises(ValueError, match="unknown sensor type 'dht23'"):
        create_sensor("s", "dht23", {})
