"""One serial port shared by a request/reply driver: a reader thread, one lock per port, a
deadline per request, and a callback when the port goes away.

The port is anything pyserial opens: ``/dev/ttyACM0``, a pty from an emulator, or
``socket://127.0.0.1:5555`` (qemu's TCP serial). Bytes go to ``on_bytes`` from the reader thread.
Every driver opens its port through :func:`open_port`: for this process alone.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import threading
from collections.abc import Callable
from typing import Any

import serial

from peripherals.exc import BoardUnavailable

log = logging.getLogger(__name__)

LOCKED = frozenset({errno.EAGAIN, errno.EWOULDBLOCK})
"""What ``flock`` says when another process holds the port."""


def open_port(port: str, baudrate: int, **options: Any) -> serial.SerialBase:
    """``port`` opened for this process alone (pyserial's ``exclusive``: an ``flock`` taken before
    the port is configured), so a second agent or an ``edge-cli`` command never talks over the
    holder, nor resets its Uno. Network URLs (``socket://``) have no lock. Raises
    BoardUnavailable with the cause and the fix."""
    try:
        return serial.serial_for_url(port, baudrate, exclusive=True, **options)
    except (serial.SerialException, OSError, ValueError) as exc:
        if getattr(exc, "errno", None) in LOCKED:
            raise BoardUnavailable(
                f"cannot open {port}: it is in use by another process (another agent or "
                "edge-cli?); `edge-cli status` shows a running agent, `fuser -v "
                f"{port}` any process") from None
        raise BoardUnavailable(f"cannot open {port}: {exc}; check the cable, the port name "
                               "(`edge-cli boards discover`) and the dialout group") from None


class SerialLink:
    def __init__(self, port: str, baudrate: int, on_bytes: Callable[[bytes], None],
                 on_lost: Callable[[str], None]):
        self.port, self.baudrate = port, baudrate
        self._on_bytes, self._on_lost = on_bytes, on_lost
        self._serial: serial.SerialBase | None = None
        self._thread: threading.Thread | None = None
        self._closing = False
        self.lock = threading.Lock()
        """Held for a whole request and its reply: one conversation per port at a time."""

    @property
    def is_open(self) -> bool:
        return self._serial is not None

    def open(self) -> None:
        self._serial = open_port(self.port, self.baudrate, timeout=0.05, write_timeout=2.0)
        self._closing = False
        self._thread = threading.Thread(target=self._read_loop, name=f"serial:{self.port}",
                                        daemon=True)
        self._thread.start()

    def write(self, data: bytes) -> None:
        port = self._serial
        if port is None:
            raise BoardUnavailable(f"{self.port} is not open")
        try:
            port.write(data)
        except (serial.SerialException, OSError) as exc:
            self._lost(f"write failed: {exc}")
            raise BoardUnavailable(f"{self.port} went away ({exc})") from None

    def close(self) -> None:
        self._closing = True
        port, self._serial = self._serial, None
        if port is not None:
            with contextlib.suppress(serial.SerialException, OSError):
                port.close()
        if self._thread and self._thread is not threading.current_thread():
            self._thread.join(timeout=1.0)
        self._thread = None

    def _read_loop(self) -> None:
        while not self._closing:
            port = self._serial
            if port is None:
                return
            try:
                data = port.read(max(1, port.in_waiting))
            except (serial.SerialException, OSError, TypeError, AttributeError) as exc:
                if not self._closing:
                    self._lost(f"read failed: {exc}")
                return
            if data:
                self._on_bytes(data)

    def _lost(self, reason: str) -> None:
        port, self._serial = self._serial, None
        if port is None:
            return
        with contextlib.suppress(serial.SerialException, OSError):
            port.close()
        self._on_lost(reason)
