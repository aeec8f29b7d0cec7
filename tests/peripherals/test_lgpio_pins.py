"""The lgpio factory the Pi header loads: a servo's pulse reaches lgpio at the width its angle
asks for (gpiozero 2.0.1's own lgpio pin would send a whole-percent duty), and the safe state
still stops the pulses or turns to the safe angle. ``lgpio`` is a recording stand-in (no GPIO
chip here); everything above it is the real factory loader, gpiozero and the board."""

from __future__ import annotations

import gpiozero.pins.lgpio
import gpiozero.pins.local
import lgpio
import pytest

import peripherals.lgpio_pins
from peripherals.base import PinMode
from peripherals.gpio import GpioBoard
from peripherals.lgpio_pins import ExactDutyLGPIOPin
from peripherals.servo import ServoOptions

HANDLE = 3


class RecordingLgpio:
    """Stands in for the ``lgpio`` module: one chip whose lines remember their mode and level,
    and every ``tx_pwm`` call as (gpio, frequency, duty %)."""

    error = lgpio.error

    def __init__(self) -> None:
        self.pwm: list[tuple[int, float, float]] = []
        self.outputs: set[int] = set()
        self.levels: dict[int, int] = {}

    def __getattr__(self, name: str) -> object:
        return getattr(lgpio, name)  # the constants (SET_PULL_NONE, BOTH_EDGES...)

    def gpiochip_open(self, chip: int) -> int:
        return HANDLE

    def gpiochip_close(self, handle: int) -> int:
        return 0

    def gpio_claim_input(self, handle: int, gpio: int, flags: int = 0) -> int:
        self.outputs.discard(gpio)
        return 0

    def gpio_claim_output(self, handle: int, gpio: int, level: int = 0, flags: int = 0) -> int:
        self.outputs.add(gpio)
        self.levels[gpio] = level
        return 0

    def gpio_free(self, handle: int, gpio: int) -> int:
        return 0

    def gpio_get_mode(self, handle: int, gpio: int) -> int:
        return ExactDutyLGPIOPin.GPIO_IS_OUT if gpio in self.outputs else 0

    def gpio_read(self, handle: int, gpio: int) -> int:
        return self.levels.get(gpio, 0)

    def gpio_write(self, handle: int, gpio: int, level: int) -> int:
        self.levels[gpio] = level
        return 0

    def tx_pwm(self, handle: int, gpio: int, frequency: float, duty: float,
               offset: int = 0, cycles: int = 0) -> int:
        assert handle == HANDLE and 0 <= duty <= 100
        self.pwm.append((gpio, frequency, duty))
        if frequency and duty:  # caught inside a pulse: lgpio's thread leaves a stop there
            self.levels[gpio] = 1
        return 15


def pulse_us(frequency: float, duty: float) -> float:
    """The high time lgpio makes of a tx_pwm call (its lgTxPwm: period times duty)."""
    return 1e6 / frequency * duty / 100


@pytest.fixture
def chip(monkeypatch) -> RecordingLgpio:
    """A Pi 4B (gpiozero reads the revision from /proc) whose lgpio is the recording one."""
    recording = RecordingLgpio()
    monkeypatch.setattr(gpiozero.pins.local, "get_pi_revision", lambda: 0xC03114)
    monkeypatch.setattr(gpiozero.pins.lgpio, "lgpio", recording)
    monkeypatch.setattr(peripherals.lgpio_pins, "lgpio", recording)
    return recording


@pytest.fixture
async def header_servo(chip):
    """Makes a board on the lgpio factory with a servo on GPIO18 (``arm``) of the given
    calibration; each is closed at the end, while the recording lgpio is still in place."""
    boards: list[GpioBoard] = []

    async def make(**servo: float) -> GpioBoard:
        board = GpioBoard("gpio", simulate=False, factory_name="lgpio", aliases={"arm": "GPIO18"},
                          servos={"arm": ServoOptions.model_validate(servo)})
        boards.append(board)
        assert board.info["pin_factory"] == "lgpio", board.detail
        await board.connect()
        await board.setup_pin("arm", PinMode.PWM)
        return board

    yield make
    for board in boards:
        await board.close()


@pytest.mark.parametrize("angle, width", [(0, 1000), (45, 1250), (90, 1500), (91, 1505.56),
                                          (180, 2000)])
async def test_lgpio_gets_the_exact_pulse_not_a_whole_percent(chip, header_servo, angle, width):
    board = await header_servo()
    await board.servo("arm", angle)
    gpio, frequency, duty = chip.pwm[-1]
    assert (gpio, frequency) == (18, 50)
    assert pulse_us(frequency, duty) == pytest.approx(width, abs=0.01)  # 90: 1500 µs, not 1400
    assert await board.read("arm") == pytest.approx(width / 20_000, abs=1e-6)


async def test_a_calibrated_servo_moves_by_microseconds(chip, header_servo):
    board = await header_servo(min_pulse_us=600, max_pulse_us=2400, frame_us=10_000)
    widths = []
    for angle in (90, 90.5, 91):
        await board.servo("arm", angle)
        widths.append(pulse_us(*chip.pwm[-1][1:]))
    assert widths == pytest.approx([1500, 1505, 1510], abs=0.01)
    assert chip.pwm[-1][1] == 100


async def test_the_safe_state_still_stops_the_pulses_or_turns_to_the_safe_angle(chip,
                                                                                 header_servo):
    limp = await header_servo()
    await limp.servo("arm", 120)
    assert await limp.apply_safe_state({"arm": False}) == []
    assert chip.pwm[-1] == (18, 0, 0)  # lgpio's off: no more pulses
    assert chip.levels[18] == 0  # and the line low, though the pulses stopped inside one
    assert limp.status().pins[0].frequency is None
    await limp.close()
    held = await header_servo(safe_angle=45)
    await held.servo("arm", 120)
    await held.write("arm", False)  # off is a servo's safe state (the door's make_safe)
    assert pulse_us(*chip.pwm[-1][1:]) == pytest.approx(1250, abs=0.01)
    await held.close()
    assert chip.pwm[-1] == (18, 0, 0) and chip.levels[18] == 0  # closing the board stops them too
