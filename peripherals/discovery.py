"""Finding boards on serial ports: USB ids say what the adapter is, a handshake says what runs.

USB VID/PID identify Arduino boards, the CH340/CP210x/FTDI adapters of clones, and ST-Link
virtual COM ports (Nucleo boards). Each candidate is then confirmed by speaking to it: the
edge-agent protocol first on ST-Link ports, Firmata first on the others.
"""

from __future__ import annotations

import subprocess
from dataclasses import asdict, dataclass, field
from typing import Any

USB_IDS: dict[tuple[int, int | None], tuple[str, str]] = {
    (0x2341, None): ("Arduino", "arduino"),
    (0x2A03, None): ("Arduino (.org)", "arduino"),
    (0x1A86, 0x7523): ("CH340 USB serial", "arduino"),
    (0x1A86, 0x55D4): ("CH9102 USB serial", "arduino"),
    (0x10C4, 0xEA60): ("CP210x USB serial", "arduino"),
    (0x0403, 0x6001): ("FTDI FT232R", "arduino"),
    (0x0403, 0x6015): ("FTDI FT231X", "arduino"),
    (0x0483, 0x3748): ("ST-Link/V2", "stm32"),
    (0x0483, 0x374B): ("ST-Link/V2-1", "stm32"),
    (0x0483, 0x374E): ("STLINK-V3", "stm32"),
    (0x0483, 0x374F): ("STLINK-V3", "stm32"),
    (0x0483, 0x5740): ("STM32 USB CDC", "stm32"),
}


@dataclass
class FoundPort:
    port: str
    vid: int | None = None
    pid: int | None = None
    adapter: str = "unknown"
    likely: str | None = None
    """The board type the USB ids suggest (``arduino`` or ``stm32``), tried first."""
    serial_number: str | None = None
    usb_path: str | None = None
    """udev's ID_PATH: names the USB socket, for boards without a (unique) serial number."""
    confirmed: str | None = None
    """The board type that answered a handshake, if any."""
    detail: str = ""
    tried: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["vid"] = f"{self.vid:04x}" if self.vid is not None else None
        data["pid"] = f"{self.pid:04x}" if self.pid is not None else None
        return data


def identify(port: str, vid: int | None, pid: int | None, serial_number: str | None = None) -> FoundPort:
    known = USB_IDS.get((vid, pid)) or USB_IDS.get((vid, None)) if vid is not None else None
    adapter, likely = known if known else ("unknown", None)
    return FoundPort(port, vid, pid, adapter, likely, serial_number)


def usb_serial_ports() -> list[FoundPort]:
    """Serial ports with a USB vendor id (pyserial's list_ports), known adapters first."""
    from serial.tools import list_ports

    found = [identify(p.device, p.vid, p.pid, p.serial_number)
             for p in list_ports.comports() if p.vid is not None]
    for item in found:
        item.usb_path = udev_id_path(item.port)
    return sorted(found, key=lambda f: (f.likely is None, f.port))


def udev_id_path(port: str) -> str | None:
    """The port's udev ``ID_PATH`` (``udevadm info``), or None where udev cannot tell."""
    try:
        out = subprocess.run(["udevadm", "info", "-q", "property", "-n", port],
                             capture_output=True, text=True, timeout=3)
    except (OSError, subprocess.TimeoutExpired):
        return None
    for line in out.stdout.splitlines():
        key, _, value = line.partition("=")
        if key == "ID_PATH" and value:
            return value
    return None


async def confirm(found: FoundPort, timeout: float = 2.5) -> FoundPort:
    """Try a handshake in the likely protocol, then the other; fills ``confirmed``/``detail``."""
    from peripherals.arduino import ArduinoBoard
    from peripherals.exc import BoardError
    from peripherals.stm32 import Stm32Board

    order = ["stm32", "arduino"] if found.likely != "arduino" else ["arduino", "stm32"]
    for kind in order:
        found.tried.append(kind)
        board: Stm32Board | ArduinoBoard
        if kind == "stm32":
            board = Stm32Board("probe", found.port, watchdog_ms=0, handshake_timeout=timeout)
        else:
            board = ArduinoBoard("probe", found.port, watchdog_ms=0, handshake_timeout=timeout)
        try:
            await board.connect()
        except BoardError as exc:
            found.detail = str(exc)
            continue
        found.confirmed, found.detail = kind, board.status().detail
        await board.close()
        return found
    return found
