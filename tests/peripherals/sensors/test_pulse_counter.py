"""A flow meter's pulses counted on a gpiozero mock pin: each pulse a real edge driven on the
pin, the total in litres, the flow rate over the time between reads (a clock the test moves),
and the count kept in a state file over a restart."""

from __future__ import annotations

import pytest
from gpiozero.pins.mock import MockFactory

from peripherals.exc import SensorError, SensorUnavailable
from peripherals.sensors.pulse_counter import PulseCounterSensor


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def factory():
    factory = MockFactory()
    yield factory
    factory.reset()


def pulses(factory, count: int, pin: int = 17) -> None:
    """``count`` pulses of an open-collector meter: the line pulled low, then let go."""
    line = factory.pin(pin)
    for _ in range(count):
        line.drive_low()
        line.drive_high()


def meter(factory, clock: Clock, **options) -> PulseCounterSensor:
    return PulseCounterSensor("water", pin="GPIO17", pulses_per_litre=450.0,
                              pin_factory=factory, clock=clock, **options)


def test_litres_and_litres_a_minute(factory):
    clock = Clock()
    sensor = meter(factory, clock)
    first = sensor.read()
    assert (first["water"].value, first["water"].unit) == (0.0, "L")
    assert (first["flow_rate"].value, first["flow_rate"].unit) == (0.0, "L/min")
    pulses(factory, 900)  # 2 litres
    clock.now += 30.0
    second = sensor.read()
    assert second["water"].value == 2.0
    assert second["flow_rate"].value == 4.0  # 2 L in half a minute
    clock.now += 60.0
    third = sensor.read()
    assert (third["water"].value, third["flow_rate"].value) == (2.0, 0.0)  # the tap is shut


def test_a_pull_down_meter_counts_its_rising_edges(factory):
    clock = Clock()
    sensor = meter(factory, clock, pull_up=False)
    sensor.read()
    line = factory.pin(17)
    for _ in range(45):
        line.drive_high()
        line.drive_low()
    clock.now += 6.0
    readings = sensor.read()
    assert readings["water"].value == 0.1
    assert readings["flow_rate"].value == 1.0


def test_the_count_survives_a_restart_in_its_state_file(factory, tmp_path):
    state = tmp_path / "state" / "water.count"
    clock = Clock()
    sensor = meter(factory, clock, state_file=state)
    sensor.read()
    pulses(factory, 1350)
    clock.now += 60
    assert sensor.read()["water"].value == 3.0
    assert state.read_text() == "1350\n"
    pulses(factory, 45)
    sensor.close()  # the agent stops: the pulses since the last read are kept too
    assert state.read_text() == "1395\n"

    restarted = meter(factory, clock, state_file=state)
    assert restarted.read()["water"].value == 3.1
    pulses(factory, 450)
    clock.now += 60
    readings = restarted.read()
    assert (readings["water"].value, readings["flow_rate"].value) == (4.1, 1.0)
    restarted.close()


def test_an_unreadable_state_file_says_what_to_do(factory, tmp_path):
    state = tmp_path / "water.count"
    state.write_text("lots\n")
    with pytest.raises(SensorError, match=r"cannot read the pulse count from .*water.count .*"
                                          "remove the file"):
        meter(factory, Clock(), state_file=state).read()


def test_a_pin_the_gpio_board_holds_is_refused(factory):
    from gpiozero import DigitalInputDevice

    taken = DigitalInputDevice("GPIO17", pin_factory=factory)
    try:
        with pytest.raises(SensorUnavailable, match="remove GPIO17 from the gpio board's pins"):
            meter(factory, Clock()).read()
    finally:
        taken.close()
