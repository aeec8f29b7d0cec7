"""The gpio board on gpiozero's MockFactory: naming, modes, PWM, inputs, safe state."""

from __future__ import annotations

import asyncio
import os
import sys

import gpiozero.pins.local
import pytest

from peripherals.base import PinMode, Pull
from peripherals.exc import BoardUnavailable, PinModeError, UnknownPin
from peripherals.gpio import GpioBoard
from peripherals.pin_factory import _device_problem, load_pin_factory


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


async def test_simulate_false_off_a_pi_is_down_with_the_reason_never_mock_pins():
    board = GpioBoard("gpio", simulate=False, aliases={"led": "GPIO17"})  # this machine: no Pi
    assert not board.simulated and board.factory is None and board.resolve("led") == "GPIO17"
    assert "does not look like a Raspberry Pi" in board.detail and "simulate = true" in board.detail
    with pytest.raises(BoardUnavailable, match="Raspberry Pi"):
        await board.connect()
    with pytest.raises(BoardUnavailable, match="board gpio is down"):
        await board.setup_pin("led", PinMode.OUTPUT)
    status = board.status()
    assert status.connected is False and status.simulated is False
    assert status.info["pin_factory"] == "auto"


@pytest.fixture
def pi4b(monkeypatch):
    """gpiozero reads the Pi's revision from /proc; this makes it a Pi 4B (no GPIO chip here)."""
    monkeypatch.setattr(gpiozero.pins.local, "get_pi_revision", lambda: 0xC03114)  # as gpiozero


def test_a_pi_5_names_its_gpio_chip(monkeypatch):
    """A Pi 5 on an older kernel has its header on gpiochip4: the reason names that chip."""
    monkeypatch.setattr(gpiozero.pins.local, "get_pi_revision", lambda: 0xC04170)
    exists = os.path.exists
    monkeypatch.setattr(os.path, "exists", lambda p: p == "/dev/gpiochip4" or exists(p))
    board = GpioBoard("gpio", simulate=False, factory_name="lgpio")
    assert "lgpio cannot open /dev/gpiochip4: no such device" in board.detail


def test_a_pi_without_a_gpio_chip_names_the_device(pi4b):
    board = GpioBoard("gpio", simulate=False, factory_name="lgpio")
    assert "lgpio cannot open /dev/gpiochip0: no such device" in board.detail


def test_lgpio_missing_says_how_to_install_it(pi4b, monkeypatch):
    monkeypatch.delitem(sys.modules, "gpiozero.pins.lgpio", raising=False)
    monkeypatch.delitem(sys.modules, "peripherals.lgpio_pins", raising=False)
    monkeypatch.setitem(sys.modules, "lgpio", None)  # import lgpio now raises ImportError
    board = GpioBoard("gpio", simulate=False, factory_name="lgpio")
    assert "lgpio is not installed" in board.detail and "pip install 'lgpio>=0.2.2'" in board.detail
    assert "python3-lgpio" in board.detail
    auto = GpioBoard("gpio", simulate=False)  # auto: lgpio's reason first, then the others tried
    assert auto.detail.startswith("pin factory lgpio is not installed")
    assert "RPi.GPIO and pigpio" in auto.detail and not auto.simulated


def test_unknown_factory_name_is_an_error():
    with pytest.raises(BoardUnavailable, match="unknown pin_factory 'gpiod'"):
        load_pin_factory("gpiod")


def test_device_problem_reports_a_missing_chip(tmp_path):
    assert "no such device" in _device_problem(str(tmp_path / "gpiochip9"))
    (tmp_path / "dev").write_text("")
    assert _device_problem(str(tmp_path / "dev")) == ""


async def test_input_bounce_drops_edges_shorter_than_bounce_ms(board, mock_factory):
    await board.connect()
    await board.setup_pin("GPIO5", PinMode.INPUT, Pull.UP, bounce_ms=200)
    await board.setup_pin("GPIO6", PinMode.INPUT, Pull.UP)
    seen = []
    board.subscribe(seen.append)
    for number in (5, 6):
        pin = mock_factory.pin(number)
        pin.drive_low(), pin.drive_high(), pin.drive_low(), pin.drive_high()
    await asyncio.sleep(0.05)
    bounced = [e.value for e in seen if e.pin == "GPIO5"]
    plain = [e.value for e in seen if e.pin == "GPIO6"]
    assert plain == [0.0, 1.0, 0.0, 1.0] and bounced == [0.0]


async def test_outputs_start_at_the_requested_line_level(board, mock_factory):
    await board.connect()
    await board.setup_pin("led", PinMode.OUTPUT, initial=True)
    await board.setup_pin("fan", PinMode.PWM, initial=True)
    assert mock_factory.pin(17).state == 1 and mock_factory.pin(18).state == 1


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
