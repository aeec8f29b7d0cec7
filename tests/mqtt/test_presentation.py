"""How pins and sensor quantities read on Home Assistant's device page: names in words that never
repeat the node's name (HA puts the device's name first), the Pi's health as diagnostics with its
flags as problem binary_sensors, and the state class each device class allows."""

from __future__ import annotations

import pytest

from edge.config.mqtt import MqttConfig
from edge.config.sensors import parse_sensor
from edge.hardware.pins import Pin
from edge.mqtt.discovery import discovery_configs, entity_name
from edge.mqtt.topic_names import Topics
from edge.mqtt.topics import NodePins
from peripherals.base import PinMode
from peripherals.sensors.pi_health import THROTTLE_BITS, UNITS
from tests.mqtt.test_discovery import meets_home_assistants_schema

PREFIX = "homeassistant"


def readme_node() -> dict[str, dict]:
    """The README's example: node greenhouse, a bme280 called greenhouse, a probe called soil,
    the Pi's health called pi, and the pump, fan and door pins."""
    cfg = MqttConfig(url="mqtt://broker.lan", node_id="greenhouse")
    pins = NodePins.build([Pin("gpio", "GPIO22", PinMode.OUTPUT, aliases=("pump",)),
                           Pin("gpio", "GPIO23", PinMode.OUTPUT, aliases=("fan",)),
                           Pin("gpio", "GPIO27", PinMode.INPUT, aliases=("door",))], servos=())
    sensors = {"greenhouse": {"temperature": "°C", "pressure": "hPa", "humidity": "%"},
               "soil": {"temperature": "°C"}, "pi": dict(UNITS), "energy": {"energy": "kWh"}}
    kinds = {"greenhouse": "bme280", "soil": "ds18b20", "pi": "pi", "energy": "analog"}
    return discovery_configs(cfg, Topics(cfg.topic_base), pins, sensors, kinds)


def test_names_are_words_and_never_repeat_the_node():
    found = readme_node()
    names = {topic.split("/")[3]: body["name"] for topic, body in found.items()}
    assert names["greenhouse_temperature"] == "Temperature"  # was "greenhouse greenhouse temperature"
    assert names["greenhouse_pressure"] == "Pressure"
    assert names["soil_temperature"] == "soil temperature"
    assert names["pi_cpu_temperature"] == "pi CPU temperature"  # was "pi cpu_temperature"
    assert names["pi_under_voltage"] == "pi under-voltage"
    assert names["pi_load_1m"] == "pi load (1 min)"
    assert names["energy_energy"] == "energy"  # an analog sensor named after its quantity
    assert (names["pump"], names["door"], names["refused"]) == ("pump", "door", "Refused command")
    for topic, body in found.items():
        meets_home_assistants_schema(topic, body, "greenhouse")


@pytest.mark.parametrize("node, names, words, name", [
    ("greenhouse", ("greenhouse",), "temperature", "Temperature"),
    ("greenhouse", ("greenhouse_air",), "humidity", "Air humidity"),
    ("Greenhouse", ("greenhouse",), "temperature", "Temperature"),
    ("green-house", ("green_house",), "light", "Light"),
    ("shed", ("water_pump",), "", "water pump"),
    ("shed", ("pi",), "under-voltage", "pi under-voltage"),
    ("pump", ("pump",), "", None),  # the pin is the device: HA shows the device's name
    ("greenhouse", ("energy",), "energy", "energy"),  # not "energy energy"
    ("greenhouse", ("soil_moisture",), "moisture", "soil moisture"),
    ("energy", ("energy",), "energy", None),
    ("pi", ("pipe",), "temperature", "Pipe temperature"),  # HA would cut "pi" off "pipe"
])
def test_entity_names(node, names, words, name):
    assert entity_name(node, *names, words=words) == name


def test_the_pis_health_is_diagnostic_with_problem_flags():
    found = readme_node()
    cpu = found[f"{PREFIX}/sensor/greenhouse/pi_cpu_temperature/config"]
    assert (cpu["device_class"], cpu["unit_of_measurement"], cpu["state_class"],
            cpu["entity_category"]) == ("temperature", "°C", "measurement", "diagnostic")
    for flag in THROTTLE_BITS:
        assert f"{PREFIX}/sensor/greenhouse/pi_{flag}/config" not in found  # no statistics
        body = found[f"{PREFIX}/binary_sensor/greenhouse/pi_{flag}/config"]
        assert (body["device_class"], body["entity_category"]) == ("problem", "diagnostic")
        assert (body["payload_on"], body["payload_off"]) == ("1", "0")  # as readings are published
        assert body["state_topic"] == f"edge-agent/greenhouse/sensor/pi/{flag}"
    load = found[f"{PREFIX}/sensor/greenhouse/pi_load_1m/config"]
    assert load["entity_category"] == "diagnostic" and "device_class" not in load
    garden = found[f"{PREFIX}/sensor/greenhouse/greenhouse_temperature/config"]
    assert "entity_category" not in garden  # the garden's own readings are not diagnostics


FIRST_SENSORS = {  # name -> its config section, as a newcomer writes it
    "air": {"type": "dht22"},
    "bench": {"type": "sht3x", "address": "0x45"},
    "shelf": {"type": "aht20"},
    "tank": {"type": "hcsr04", "echo_pin": "GPIO24", "trigger_pin": "GPIO23",
             "empty_distance": 110, "full_distance": 10},
    "irrigation": {"type": "pulse_counter", "pin": "GPIO17", "pulses_per_litre": 450},
}


@pytest.mark.parametrize("entity, device_class, unit, state_class", [
    ("air_temperature", "temperature", "°C", "measurement"),
    ("air_humidity", "humidity", "%", "measurement"),
    ("bench_temperature", "temperature", "°C", "measurement"),
    ("bench_humidity", "humidity", "%", "measurement"),
    ("shelf_temperature", "temperature", "°C", "measurement"),
    ("shelf_humidity", "humidity", "%", "measurement"),
    ("tank_distance", "distance", "cm", "measurement"),
    ("tank_level", None, "%", "measurement"),  # HA has no class for a fill level
    ("irrigation_water", "water", "L", "total_increasing"),  # the Energy dashboard's water
    ("irrigation_flow_rate", "volume_flow_rate", "L/min", "measurement"),
])
def test_the_first_sensors_people_buy_are_announced_with_their_device_classes(
        entity, device_class, unit, state_class):
    cfg = MqttConfig(url="mqtt://broker.lan", node_id="greenhouse")
    sections = {name: parse_sensor(section) for name, section in FIRST_SENSORS.items()}
    found = discovery_configs(cfg, Topics(cfg.topic_base), NodePins.build([], servos=()),
                              {name: s.units for name, s in sections.items()},
                              {name: s.type for name, s in sections.items()})
    body = found[f"{PREFIX}/sensor/greenhouse/{entity}/config"]
    assert body.get("device_class") == device_class
    assert (body["unit_of_measurement"], body["state_class"]) == (unit, state_class)
    assert "entity_category" not in body  # the garden's readings, not the machine's
    for topic, config in found.items():
        meets_home_assistants_schema(topic, config, "greenhouse")
