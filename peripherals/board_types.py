"""The board types this project ships: each one's options (the keys of its ``[boards.NAME]``
section, with their defaults) and how its driver is built. The drivers import gpiozero, asyncio
and pyserial at the top; this module does not, so that reading a config file costs none of them:
each driver is imported when its board is built.

>>> GpioBoardOptions().aliases
{'led': 'GPIO17', 'button': 'GPIO27'}
>>> ArduinoBoardOptions(port="/dev/ttyACM0").baudrate, Stm32BoardOptions(port="socket://x:1").baudrate
(57600, 115200)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import Field

from peripherals.base import Board, BoardContext, BoardOptions, BoardSpec, DeviceNode
from peripherals.header_layout import HEADER_GPIO
from peripherals.uno_layout import SERVO_PINS


class GpioBoardOptions(BoardOptions):
    """The Pi header. Pin keys and alias targets are gpiozero names (GPIO17, 17, BOARD11)."""

    simulate: bool = True
    """gpiozero's mock pins (on by default: a laptop has no header). ``false`` drives the real
    header."""
    pin_factory: Literal["auto", "lgpio", "rpigpio", "pigpio", "native"] = "auto"
    """gpiozero's pin factory on real hardware; ``auto`` tries lgpio, then RPi.GPIO and pigpio."""
    aliases: dict[str, str] = {"led": "GPIO17", "button": "GPIO27"}


class SerialBoardOptions(BoardOptions):
    """A microcontroller on a serial port. Pins start empty: list the ones the agent may use."""

    port: str = Field(min_length=1)
    """``/dev/ttyACM0``, ``/dev/serial/by-id/...``, or ``socket://HOST:PORT`` (an emulator)."""
    watchdog_ms: int = Field(default=1000, ge=0, le=65535)
    """Firmware drives the safe values when the host is silent this long; 0 turns it off."""
    serial_number: str | None = None
    """The board's USB serial number: the udev rules name it ``/dev/edge-<board>``."""
    usb_path: str | None = None
    """For clones without a (unique) USB serial number (CH340, some CP210x): the USB port's
    ``ID_PATH`` (``edge-cli boards discover`` shows it); the board must stay in that socket."""


class ArduinoBoardOptions(SerialBoardOptions):
    """An Uno-class board running Firmata (ours with the watchdog, or stock StandardFirmata).
    Pins are D0..D13 and A0..A5."""

    baudrate: int = 57600
    sampling_interval_ms: int = Field(default=19, ge=1, le=16383)
    """How often the firmware samples analog inputs and reports them."""


class Stm32BoardOptions(SerialBoardOptions):
    """An STM32F4 board running edge-agent firmware (firmware/stm32). Pins are PA0, PC13..."""

    baudrate: int = 115200
    request_timeout_seconds: float = Field(default=0.5, gt=0, le=30)


def _gpio(name: str, options: GpioBoardOptions, context: BoardContext) -> Board:
    from peripherals.gpio import GpioBoard

    return GpioBoard(name, simulate=options.simulate, aliases=options.aliases,
                     pin_factory=context.pin_factory, factory_name=options.pin_factory,
                     servos=options.servos)


def _gpio_devices(options: GpioBoardOptions) -> Sequence[DeviceNode]:
    if options.simulate:
        return ()
    return (DeviceNode("/dev/gpiochip*", "gpio",
                       "gpiochip devices exist on a Pi only; set simulate = true elsewhere"),)


def _arduino(name: str, options: ArduinoBoardOptions, context: BoardContext) -> Board:
    if options.simulate:
        from peripherals.simulated_board import UNO_LAYOUT, SimulatedBoard
        from peripherals.uno_layout import uno_pin_name

        return SimulatedBoard(name, "arduino", UNO_LAYOUT, uno_pin_name,
                              aliases=options.aliases, servo=SERVO_PINS, servos=options.servos)
    from peripherals.arduino import ArduinoBoard

    return ArduinoBoard(name, options.port, baudrate=options.baudrate, aliases=options.aliases,
                        watchdog_ms=options.watchdog_ms,
                        sampling_interval_ms=options.sampling_interval_ms, servos=options.servos)


def _stm32(name: str, options: Stm32BoardOptions, context: BoardContext) -> Board:
    if options.simulate:
        from peripherals.simulated_board import STM32_LAYOUT, SimulatedBoard, stm32_canonical

        return SimulatedBoard(name, "stm32", STM32_LAYOUT, stm32_canonical,
                              aliases=options.aliases)
    from peripherals.stm32 import Stm32Board

    return Stm32Board(name, options.port, baudrate=options.baudrate, aliases=options.aliases,
                      watchdog_ms=options.watchdog_ms,
                      request_timeout=options.request_timeout_seconds)


def _serial_port(options: SerialBoardOptions) -> Sequence[DeviceNode]:
    if options.simulate or not options.port.startswith("/"):  # simulated, or an emulator
        return ()
    return (DeviceNode(options.port, "dialout",
                       "plug the board in and check its port (`ls /dev/ttyACM* /dev/ttyUSB*`); a "
                       "stable /dev/edge-<board> name needs serial_number in the board's config "
                       "and `sudo edge-cli service install`"),)


GPIO = BoardSpec("gpio", GpioBoardOptions, _gpio, devices=_gpio_devices, servo_pins=HEADER_GPIO,
                 servos_declared=True,
                 default_pins={"led": {"mode": "output", "safe": "off"}, "button": {"mode": "input"}})
ARDUINO = BoardSpec("arduino", ArduinoBoardOptions, _arduino, devices=_serial_port,
                    servo_pins=SERVO_PINS)
STM32 = BoardSpec("stm32", Stm32BoardOptions, _stm32, devices=_serial_port)
"""Our STM32 firmware has PWM but no servo command (``firmware/PROTOCOL.md``): no servo pins."""
