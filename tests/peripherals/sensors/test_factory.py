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


def test_an_analog_pin_is_read_through_its_board_not_built_here():
    with pytest.raises(ValueError, match=r"read through its board \(uno:A0\)"):
        create_sensor("tank", "analog", {"pin": "uno:A0"})


def test_an_unknown_type_is_refused():
    with pytest.raises(ValueError, match="unknown sensor type 'dht22'"):
        create_sensor("s", "dht22", {})
