"""Sensor sections: ``type`` picks the schema, each section knows its quantities before any sensor
is opened, defaults are written once in the model, and errors name the key and say what to do."""

from __future__ import annotations

import pytest

from edge.config.loader import load_config
from edge.config.sensors import sensor_section
from edge.core.exc import ConfigError
from peripherals.sensors.factory import create_sensor

EVERY_TYPE = """
[sensors.pi]
type = "pi"
interval_seconds = 60

[sensors.water]
type = "ds18b20"
device = "28-0123456789ab"

[sensors.greenhouse]
type = "bme280"
address = 0x77

[sensors.soil]
type = "ads1115"
channel = 2
address = "0x49"
fsr = 2.048
scale = 50
offset = -10
quantity = "moisture"
unit = "%"

[sensors.light]
type = "mcp3008"
channel = 3
vref = 1

[sensors.tank]
type = "analog"
pin = "uno:A0"
scale = 500
unit = "°C"
quantity = "temperature"
"""


def load(write_config, isolated_env, text: str):
    return load_config(str(write_config(text)), env=isolated_env).config


def test_no_sensors_by_default(default_config):
    assert default_config.config.sensors == {}


def test_every_type_with_its_parameters_and_defaults(write_config, isolated_env):
    sensors = load(write_config, isolated_env, EVERY_TYPE).sensors
    assert [type(s) for s in sensors.values()] == [sensor_section(kind) for kind in (
        "pi", "ds18b20", "bme280", "ads1115", "mcp3008", "analog")]
    assert sensors["pi"].interval_seconds == 60 and sensors["water"].interval_seconds == 30
    assert (sensors["greenhouse"].bus, sensors["greenhouse"].address) == (1, 0x77)
    soil = sensors["soil"]
    assert (soil.channel, soil.address, soil.fsr, soil.data_rate) == (2, 0x49, 2.048, 128)
    assert (soil.scale, soil.offset, soil.quantity, soil.unit) == (50, -10, "moisture", "%")
    light = sensors["light"]
    assert (light.port, light.device, light.select_pin, light.vref) == (0, 0, None, 1)
    assert (light.quantity, light.unit, light.scale, light.offset) == ("voltage", "V", 1, 0)
    assert (sensors["tank"].board, sensors["tank"].board_pin) == ("uno", "A0")


def test_quantities_and_units_are_known_before_any_sensor_is_opened(write_config, isolated_env):
    sensors = load(write_config, isolated_env, EVERY_TYPE).sensors
    assert sensors["greenhouse"].units == {"temperature": "°C", "pressure": "hPa", "humidity": "%"}
    assert sensors["water"].quantities == ("temperature",)
    assert sensors["soil"].units == {"moisture": "%"}
    assert sensors["light"].units == {"voltage": "V"}
    assert sensors["tank"].units == {"temperature": "°C"}
    pi = sensors["pi"].quantities
    assert pi[0] == "cpu_temperature" and {"under_voltage", "throttled_occurred", "load_1m",
                                            "disk_used", "memory_used"} <= set(pi)


def test_an_analog_pin_defaults_to_the_bare_value(write_config, isolated_env):
    tank = load(write_config, isolated_env, '[sensors.t]\ntype = "analog"\npin = "nucleo:PA0"\n').sensors["t"]
    assert tank.units == {"value": ""} and (tank.scale, tank.offset) == (1, 0)


def test_each_driver_built_from_its_section_yields_what_the_section_announced(
        write_config, isolated_env, tmp_path):
    sensors = load(write_config, isolated_env, EVERY_TYPE).sensors
    for name, section in sensors.items():
        if section.type == "analog":
            continue  # read through its board by the runtime, not a driver
        driver = create_sensor(name, section.type, section, root=tmp_path)
        assert (driver.name, driver.kind, driver.units) == (name, section.type, section.units)


@pytest.mark.parametrize("text,expected", [
    ('[sensors.x]\ntype = "bme28"\n',
     r"sensors\.x\.type: unknown type 'bme28'; use one of: pi, ds18b20, bme280, ads1115, mcp3008, "
     r"dht22, sht3x, aht20, hcsr04, pulse_counter, analog"),
    ('[sensors.x]\ninterval_seconds = 5\n', r"sensors\.x: type is missing; use one of: pi, ds18b20"),
    ('[sensors."green house"]\ntype = "pi"\n', r"sensor name 'green house': use letters, digits"),
    ('[sensors.x]\ntype = "bme280"\naddress = 0x40\n', r"sensors\.x\.address: .*0x76 \(SDO to GND\) or 0x77"),
    ('[sensors.x]\ntype = "ads1115"\n', r"sensors\.x\.channel: required key is missing"),
    ('[sensors.x]\ntype = "ads1115"\nchannel = 4\n', r"sensors\.x\.channel: must be at most 3 \(got 4\)"),
    ('[sensors.x]\ntype = "ads1115"\nchannel = 0\nfsr = 5.0\n', r"sensors\.x\.fsr: .*6\.144, 4\.096"),
    ('[sensors.x]\ntype = "ads1115"\nchannel = 0\naddress = 0x50\n', r"sensors\.x\.address: .*0x48 \(ADDR to GND\)"),
    ('[sensors.x]\ntype = "analog"\npin = "A0"\n', r'sensors\.x\.pin: .*BOARD:PIN \(e\.g\. "uno:A0"\)'),
    ('[sensors.x]\ntype = "ds18b20"\ndevice = "28-xyz"\n', r"sensors\.x\.device: .*ls /sys/bus/w1/devices"),
    ('[sensors.x]\ntype = "mcp3008"\nchannel = 1\nquantity = "soil.moisture"\n',
     r"sensors\.x\.quantity: .*letters, digits and '_'"),
    ('[sensors.x]\ntype = "mcp3008"\nchannel = 1\nselect_pin = "GPIO5"\ndevice = 1\n',
     r"sensors\.x: .*select_pin and port/device both choose the chip select"),
    ('[sensors.x]\ntype = "pi"\ninterval_seconds = 0\n',
     r"sensors\.x\.interval_seconds: must be at least 0\.05 \(got 0\)"),
    ('[sensors.x]\ntype = "pi"\nbus = 1\n', r"sensors\.x\.bus: unknown key"),
    ('[sensors.x]\ntype = "bme280"\naddress = "seventy"\n', r"sensors\.x\.address: .*I2C address such as 0x76"),
])
def test_bad_sensor_sections_name_the_key(write_config, isolated_env, text, expected):
    with pytest.raises(ConfigError, match=expected):
        load(write_config, isolated_env, text)
