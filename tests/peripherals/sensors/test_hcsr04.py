"""HC-SR04 through gpiozero's own DistanceSensor on gpiozero's mock pin factory: the trigger pin
answers each ping with an echo pulse on the echo pin, its edges stamped with the times the pulse
stands for (so the distance is exact under any load), and the sensor turns the median echo into
cm and, with a tank's empty and full distances, a level in %."""

from __future__ import annotations

import pytest
from gpiozero.pins.mock import MockFactory

from peripherals.exc import SensorError, SensorUnavailable
from peripherals.sensors.factory import create_sensor
from peripherals.sensors.hcsr04 import Hcsr04Sensor
from tests.peripherals.sensors.echo_pins import EchoPin, TriggerPin


@pytest.fixture
def module():
    """An HC-SR04 wired to GPIO24 (echo) and GPIO23 (trigger) of a mock header."""
    factory = MockFactory()
    echo = factory.pin(24, pin_class=EchoPin)
    trigger = factory.pin(23, pin_class=TriggerPin, echo_pin=echo)
    yield trigger
    factory.reset()


def sensor_on(module, **options) -> Hcsr04Sensor:
    built = create_sensor("tank", "hcsr04", {"echo_pin": "GPIO24", "trigger_pin": "GPIO23",
                                             **options}, pin_factory=module.factory)
    assert isinstance(built, Hcsr04Sensor)
    return built


def test_the_echo_is_the_distance_in_cm(module):
    module.distance = 87.5
    readings = sensor_on(module).read()
    assert readings["distance"].unit == "cm"
    assert readings["distance"].value == pytest.approx(87.5, abs=0.1)
    assert set(readings) == {"distance"}
    assert module.pings >= 1


def test_each_read_is_fresh_and_leaves_the_pins_free(module):
    sensor = sensor_on(module)
    module.distance = 40.0
    assert sensor.read()["distance"].value == pytest.approx(40.0, abs=0.1)
    module.distance = 25.0
    assert sensor.read()["distance"].value == pytest.approx(25.0, abs=0.1)
    assert module.echo_pin.when_changed is None  # closed after the read


def test_a_tank_level_from_its_empty_and_full_distances(module):
    sensor = sensor_on(module, empty_distance=110, full_distance=10)
    assert sensor.units == {"distance": "cm", "level": "%"}
    module.distance = 35.0
    readings = sensor.read()
    assert (readings["level"].value, readings["level"].unit) == (75.0, "%")
    module.distance = 150.0  # below the empty mark: empty, not negative
    assert sensor.read()["level"].value == 0.0


def test_farther_than_max_distance_reads_as_max_distance(module):
    module.distance = 300.0
    assert sensor_on(module, max_distance=200).read()["distance"].value == 200.0


@pytest.mark.filterwarnings("ignore::gpiozero.exc.DistanceSensorNoEcho")  # gpiozero says it too
def test_no_echo_fails_the_read_naming_the_divider(module):
    with pytest.raises(SensorError, match=r"no echo from the HC-SR04 \(hcsr04 echo GPIO24 "
                                          r"trigger GPIO23\): check the wiring .*1k/2k divider"):
        sensor_on(module).read()
    assert module.pings >= 1


def test_a_pin_in_use_is_refused_saying_which_to_remove(module):
    from gpiozero import DigitalOutputDevice

    taken = DigitalOutputDevice("GPIO23", pin_factory=module.factory)
    try:
        with pytest.raises(SensorUnavailable, match=r"a pin is in use .*remove GPIO24 and GPIO23 "
                                                    "from the gpio board's pins"):
            sensor_on(module).read()
    finally:
        taken.close()


@pytest.mark.parametrize("options, words", [
    ({"empty_distance": 100}, "set both empty_distance and full_distance"),
    ({"empty_distance": 20, "full_distance": 80}, "full_distance must be less than empty_distance"),
    ({"trigger_pin": "GPIO24"}, "two different pins"),
])
def test_options_that_cannot_work_are_refused(options, words):
    with pytest.raises(ValueError, match=words):
        create_sensor("tank", "hcsr04", {"echo_pin": "GPIO24", "trigger_pin": "GPIO23", **options})
