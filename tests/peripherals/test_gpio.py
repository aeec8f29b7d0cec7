"""The gpio board on gpiozero's MockFactory: naming, modes, PWM, inputs, safe state."""

from __future__ import annotations

import pytest

from peripherals.base import PinMode, Pull
from peripherals.exc import PinModeError, UnknownPin
from peripherals.gpio import GpioBoard


@pytest.fixture
def board(mock_factory):
    return GpioBoard("gpio", aliases={"led": "GPIO17", "fan": "BOARD12"}, pin_factory=mock_factory)


@pytest.mark.parametrize("spec", ["GPIO17", "17", "BCM17", "BOARD11", "J8:11", "led"])
def test_gpiozero_names_and_aliases_resolve(board, spec):
    assert board.resolve(spec) == "GPIO17"


@pytest.mark.parametrize("spec", ["GPIO99", "40", "BOARD1", "BOARD41", "-1", "GPIO17.5", "pump"])
def test_pins_not_on_the_board_are_errors_not_wrapped(board, spec):
    with pytest.raises(UnknownPin):
        board.resolve(spec)


def test_bad_alias_target_is_an_error(mock_factory):
    with pytest.raises(UnknownPin, match="GPIO77"):
        GpioBoard("gpio", aliases={"x": "GPIO77"}, pin_factory=mock_factory)


def test_simulate_uses_a_pwm_capable_mock_factory_and_says_so():
    board = GpioBoard("gpio", simulate=True)
    assert board.simulated and "simulate = true" in board.status().detail


def test_no_pi_factory_falls_back_to_simulation():
    board = GpioBoard("gpio", simulate=False)  # this machine is not a Pi
    assert board.simulated and "no Pi pin factory" in board.detail


async def test_output_write_drives_the_mock_pin(board, mock_factory):
    await board.setup_pin("led", PinMode.OUTPUT)
    assert mock_factory.pin(17).state == 0
    await board.write("led", True)
    assert mock_factory.pin(17).state == 1
    assert await board.read("GPIO17") == 1.0


async def test_pwm_sets_duty_and_frequency(board, mock_factory):
    await board.setup_pin("fan", PinMode.PWM)
    await board.pwm("fan", 0.25, frequency=500)
    assert mock_factory.pin(18).state == pytest.approx(0.25)
    assert mock_factory.pin(18).frequency == 500
    with pytest.raises(PinModeError):
        await board.pwm("fan", 1.5)


async def test_input_follows_the_driven_level(board, mock_factory):
    await board.setup_pin("GPIO27", PinMode.INPUT, Pull.UP)
    mock_factory.pin(27).drive_low()
    assert await board.read("GPIO27") == 0.0
    mock_factory.pin(27).drive_high()
    assert await board.read("GPIO27") == 1.0


async def test_writing_an_input_or_unclaimed_pin_fails(board):
    await board.setup_pin("GPIO27", PinMode.INPUT)
    with pytest.raises(PinModeError, match="input"):
        await board.write("GPIO27", True)
    with pytest.raises(PinModeError, match="not set up"):
        await board.write("GPIO22", True)


async def test_safe_state_survives_close_for_pins_held_on(board, mock_factory):
    await board.setup_pin("led", PinMode.OUTPUT)
    await board.setup_pin("GPIO22", PinMode.OUTPUT)
    await board.write("led", True)
    await board.apply_safe_state({"led": False, "GPIO22": True, "GPIO99": False})
    await board.close()
    assert mock_factory.pin(17).state == 0
    assert mock_factory.pin(22).state == 1


def test_capabilities_list_every_header_gpio_with_aliases(board):
    caps = {p.name: p for p in board.capabilities()}
    assert "GPIO2" in caps and "GPIO27" in caps and len(caps) == 28
    assert caps["GPIO17"].aliases == ("led",)
    assert PinMode.PWM in caps["GPIO17"].modes
