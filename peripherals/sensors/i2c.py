"""One chip on an I2C bus through smbus2 (``/dev/i2c-N``), with errors that say what to do.

The bus is opened through ``open_bus`` (``smbus2.SMBus`` unless a test gives a loopback chip),
so every driver above here talks to a real object with smbus2's methods, never to a patch.

>>> chip = I2CChip(1, 0x76)
>>> chip.where
'0x76 on /dev/i2c-1'
"""

from __future__ import annotations

import contextlib
import errno
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Annotated, Protocol

from pydantic import BeforeValidator

from peripherals.base import DeviceNode
from peripherals.exc import SensorError, SensorUnavailable

if TYPE_CHECKING:
    from smbus2 import i2c_msg


class SMBusLike(Protocol):
    """The part of ``smbus2.SMBus`` the drivers use."""

    def read_byte_data(self, i2c_addr: int, register: int, force: bool | None = None) -> int: ...

    def write_byte_data(self, i2c_addr: int, register: int, value: int,
                        force: bool | None = None) -> None: ...

    def read_word_data(self, i2c_addr: int, register: int, force: bool | None = None) -> int: ...

    def write_word_data(self, i2c_addr: int, register: int, value: int,
                        force: bool | None = None) -> None: ...

    def read_i2c_block_data(self, i2c_addr: int, register: int, length: int,
                            force: bool | None = None) -> list[int]: ...

    def i2c_rdwr(self, *i2c_msgs: i2c_msg) -> None: ...

    def close(self) -> None: ...


BusOpener = Callable[[int], SMBusLike]

ENABLE_I2C = ("enable I2C with `sudo raspi-config nonint do_i2c 0` (or dtparam=i2c_arm=on in "
              "/boot/firmware/config.txt) and reboot")


def _address(value: object) -> object:
    """I2C addresses as TOML integers (``0x76``) or text (``"0x76"``)."""
    if isinstance(value, str):
        try:
            return int(value, 0)
        except ValueError:
            raise ValueError(f"an I2C address such as 0x76, not {value!r}") from None
    return value


Address = Annotated[int, BeforeValidator(_address)]
"""An I2C chip's address in a driver's options: ``0x76`` or ``"0x76"``."""


def bus_node(bus: int) -> DeviceNode:
    """``/dev/i2c-<bus>``, which the udev rules of Pi OS give to the i2c group."""
    return DeviceNode(f"/dev/i2c-{bus}", "i2c", ENABLE_I2C)


def _smbus2(bus: int) -> SMBusLike:
    """``smbus2.SMBus(bus)``, imported when a bus is first opened, not by every agent."""
    from smbus2 import SMBus

    return SMBus(bus)


class I2CChip:
    """A chip at ``address`` on bus ``bus``. Every transfer error becomes a SensorError saying
    what to check; the bus is closed then and opened again by the next transfer."""

    def __init__(self, bus: int, address: int, open_bus: BusOpener | None = None):
        self.bus, self.address = bus, address
        self._open_bus: BusOpener = open_bus or _smbus2
        self._smbus: SMBusLike | None = None

    @property
    def where(self) -> str:
        return f"0x{self.address:02x} on /dev/i2c-{self.bus}"

    def _opened(self) -> SMBusLike:
        if self._smbus is None:
            try:
                self._smbus = self._open_bus(self.bus)
            except FileNotFoundError:
                raise SensorUnavailable(f"no /dev/i2c-{self.bus}: {ENABLE_I2C}; `ls /dev/i2c-*` "
                                        "lists the buses there are") from None
            except PermissionError:
                raise SensorUnavailable(f"permission denied on /dev/i2c-{self.bus}: add the "
                                        "agent's user to the i2c group (`sudo usermod -aG i2c "
                                        "$USER`, then log in again or restart the service)") from None
            except OSError as exc:
                raise SensorUnavailable(f"cannot open /dev/i2c-{self.bus}: {exc.strerror}") from None
        return self._smbus

    def close(self) -> None:
        if self._smbus is not None:
            smbus, self._smbus = self._smbus, None
            with contextlib.suppress(OSError):
                smbus.close()

    def _failed(self, exc: OSError, what: str) -> SensorError:
        self.close()
        # EREMOTEIO from the Pi's controller (no ACK), ENODEV from i2c-stub, ENXIO/EIO elsewhere
        if exc.errno in (errno.EREMOTEIO, errno.ENODEV, errno.ENXIO, errno.EIO, errno.ETIMEDOUT):
            return SensorError(f"no answer from {self.where} ({what}: {exc.strerror}): check the "
                               f"wiring (SDA, SCL, 3.3 V, GND) and the address (`i2cdetect -y "
                               f"{self.bus}` lists the chips that answer)")
        return SensorError(f"{what} failed at {self.where}: {exc.strerror or exc}")

    def read_byte(self, register: int) -> int:
        try:
            return self._opened().read_byte_data(self.address, register)
        except OSError as exc:
            raise self._failed(exc, f"reading register 0x{register:02x}") from None

    def write_byte(self, register: int, value: int) -> None:
        try:
            self._opened().write_byte_data(self.address, register, value)
        except OSError as exc:
            raise self._failed(exc, f"writing register 0x{register:02x}") from None

    def read_block(self, register: int, length: int) -> bytes:
        try:
            return bytes(self._opened().read_i2c_block_data(self.address, register, length))
        except OSError as exc:
            raise self._failed(exc, f"reading {length} bytes from 0x{register:02x}") from None

    def read_word_be(self, register: int) -> int:
        """A 16-bit register sent most significant byte first (SMBus words are LSB first)."""
        try:
            word = self._opened().read_word_data(self.address, register)
        except OSError as exc:
            raise self._failed(exc, f"reading register 0x{register:02x}") from None
        return swap16(word)

    def write_word_be(self, register: int, value: int) -> None:
        try:
            self._opened().write_word_data(self.address, register, swap16(value))
        except OSError as exc:
            raise self._failed(exc, f"writing register 0x{register:02x}") from None

    def send(self, data: bytes, what: str) -> None:
        """Write ``data`` as one plain I2C message (a command, not a register write)."""
        from smbus2 import i2c_msg

        try:
            self._opened().i2c_rdwr(i2c_msg.write(self.address, data))
        except OSError as exc:
            raise self._failed(exc, what) from None

    def receive(self, length: int, what: str) -> bytes:
        """Read ``length`` bytes as one plain I2C message (no register byte first)."""
        from smbus2 import i2c_msg

        message = i2c_msg.read(self.address, length)
        try:
            self._opened().i2c_rdwr(message)
        except OSError as exc:
            raise self._failed(exc, what) from None
        return bytes(message)


def crc8(data: bytes, *, polynomial: int = 0x31, initial: int = 0xFF) -> int:
    """The CRC-8 Sensirion and Aosong chips append to their words (x^8 + x^5 + x^4 + 1, start
    0xFF, no reflection, no final XOR); the SHT3x datasheet's example is 0xBEEF -> 0x92.

    >>> hex(crc8(bytes([0xBE, 0xEF])))
    '0x92'
    """
    crc = initial
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = ((crc << 1) ^ polynomial) & 0xFF if crc & 0x80 else (crc << 1) & 0xFF
    return crc


def swap16(word: int) -> int:
    """The two bytes of a 16-bit word swapped.

    >>> hex(swap16(0x1234))
    '0x3412'
    """
    return ((word & 0xFF) << 8) | ((word >> 8) & 0xFF)


def little_endian(data: Sequence[int], offset: int, *, signed: bool) -> int:
    """The 16-bit little-endian word at ``offset`` (calibration words are stored so)."""
    return int.from_bytes(bytes(data[offset:offset + 2]), "little", signed=signed)
