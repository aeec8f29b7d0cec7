"""Hobby servos on the Pi header (gpiozero's AngularServo on MockFactory's PWM pins): the pin's
own frequency and duty for each angle, the calibration of ``[boards.NAME.servos]``, refusals,
and the safe state (no more pulses, or the safe angle)."""

from __future__ import annotations

import pytest

from peripherals.arduino import ArduinoBoard
from peripherals.base import PinMode
from peripherals.exc import PinModeError
from peripherals.gpio import GpioBoard
from peripherals.servo import ServoOptions

FRAME = 0.020


async def servo_board(mock_factory, **servo: float) -> GpioBoard:
    board = GpioBoard("gpio", aliases={"arm": "GPIO18"}, pin_factory=mock_factory,
                      servos={"arm": ServoOptions.model_validate(servo)})
    await board.connect()
    await board.setup_pin("arm", PinMode.PWM)
    return board


@pytest.mark.parametrize("angle, pulse", [(0, 0.001), (45, 0.00125), (90, 0.0015), (180, 0.002)])
async def test_an_angle_is_a_pulse_in_a_50_hz_frame(mock_factory, angle, pulse):
    board = await servo_board(mock_factory)
    pin = mock_factory.pin(18)
    assert pin.frequency is None  # a declared servo sends nothing until it is given an angle
    await board.servo("GPIO18", angle)
    assert pin.frequency == 50
    assert pin.state == pytest.approx(pulse / FRAME)
    assert await board.read("arm") == pytest.approx(pulse / FRAME)


async def test_the_range_and_pulse_widths_come_from_the_servos_section(mock_factory):
    board = await servo_board(mock_factory, min_angle=30, max_angle=150, min_pulse_us=500,
                              max_pulse_us=2500, frame_us=10_000)
    pin = mock_factory.pin(18)
    await board.servo("arm", 30)
    assert (pin.frequency, pin.state) == (100, pytest.approx(0.0005 / 0.010))
    await board.servo("arm", 150)
    assert pin.state == pytest.approx(0.0025 / 0.010)
    await board.servo("arm", 60)
    assert pin.state == pytest.approx(0.0010 / 0.010)  # a quarter of the way: 500 + 500 µs
    for outside in (29.9, 150.5):
        with pytest.raises(PinModeError, match="outside GPIO18's range 30..150 degrees"):
            await board.servo("arm", outside)
    assert pin.state == pytest.approx(0.0010 / 0.010)
    assert board.status().pins[0].frequency == 100


async def test_a_pin_not_declared_as_a_servo_is_refused_and_left_alone(mock_factory):
    board = await servo_board(mock_factory)
    await board.setup_pin("GPIO12", PinMode.PWM)
    await board.pwm("GPIO12", 0.3)
    with pytest.raises(PinModeError, match=r"GPIO12 is not declared as a servo on board gpio; "
                                           r"add \[boards.gpio.servos.GPIO12\]"):
        await board.servo("GPIO12", 90)
    assert mock_factory.pin(12).state == pytest.approx(0.3)
    assert mock_factory.pin(12).frequency == 100


async def test_a_servo_takes_angles_only(mock_factory):
    board = await servo_board(mock_factory)
    await board.servo("arm", 90)
    with pytest.raises(PinModeError, match="drives a servo: give it an angle, not a duty"):
        await board.pwm("arm", 0.5)
    with pytest.raises(PinModeError, match="drives a servo: give it an angle"):
        await board.write("arm", True)
    assert mock_factory.pin(18).state == pytest.approx(0.0015 / FRAME)


async def test_the_safe_state_stops_the_pulses(mock_factory):
    board = await servo_board(mock_factory)
    await board.servo("arm", 120)
    assert await board.apply_safe_state({"arm": False}) == []
    assert mock_factory.pin(18).frequency is None  # limp where it is
    await board.servo("arm", 10)  # and it takes angles again
    await board.write("arm", False)  # off is the safe state too (the door's make_safe)
    assert mock_factory.pin(18).frequency is None


async def test_the_safe_state_turns_to_the_safe_angle_when_one_is_set(mock_factory):
    board = await servo_board(mock_factory, safe_angle=0)
    await board.servo("arm", 120)
    assert await board.apply_safe_state({"arm": False}) == []
    pin = mock_factory.pin(18)
    assert (pin.frequency, pin.state) == (50, pytest.approx(0.001 / FRAME))


async def test_closing_the_board_releases_the_servo(mock_factory):
    board = await servo_board(mock_factory)
    await board.servo("arm", 90)
    await board.close()
    assert mock_factory.pin(18).frequency is None


async def test_an_uno_checks_a_servos_range_before_it_touches_the_link():
    uno = ArduinoBoard("uno", "/dev/null", servos={"9": ServoOptions(max_angle=90)})
    with pytest.raises(PinModeError, match="angle 120 is outside D9's range 0..90 degrees"):
        await uno.servo("D9", 120)
