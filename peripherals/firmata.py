"""Firmata as the Arduino driver speaks it: the messages it uses, pyfirmata2's Board fitted to a
port this process owns, what the firmware answers, and the handshake.

The handshake waits for a firmware report (asking again every quarter second, since a board that
resets as its port opens announces itself before it listens), then probes for our EDGE_WATCHDOG
sysex (``firmware/PROTOCOL.md``) with a query fenced by a second firmware report, so the answer
is never a guess. :class:`~peripherals.arduino.ArduinoBoard` is the Board built on it.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

import serial

from peripherals.exc import BoardUnavailable
from peripherals.serial_link import open_port

log = logging.getLogger(__name__)

EDGE_WATCHDOG = 0x0E
WD_DISARM, WD_ARM, WD_QUERY, WD_TRIPPED = 0, 1, 2, 3
REPORT_FIRMWARE = 0x79
PIN_STATE_QUERY, PIN_STATE_RESPONSE = 0x6D, 0x6E
FIRMATA_OUTPUT, FIRMATA_PWM = 1, 3
BOOT_SECONDS = 4.0
"""Port open to Firmata answering on a real Uno: bootloader (~0.5 s) plus StandardFirmata's start
(~2.8 s in the emulator), with room to spare."""
PROBE_ROUNDS = 3
"""Watchdog probes answered by the fence alone before the sketch is taken to have no watchdog."""

Sysex = tuple[int, list[int]]
"""A sysex command and its data bytes."""


class Send(Protocol):
    """Writes sysex commands to the board in one hold of its port lock."""

    def __call__(self, *commands: Sysex) -> None: ...


def plausible_report(data: tuple[int, ...]) -> tuple[str, int, int] | None:
    """(name, major, minor) from a REPORT_FIRMWARE body, None when it is garbled: a byte lost on
    the link shifts the name into the version (``2.69`` for ``2.5``) and leaves non-ASCII text.

    >>> plausible_report((2, 5, *b"E\\0d\\0"))
    ('Ed', 2, 5)
    >>> plausible_report((2, 69, 0, 100, 0))
    """
    if len(data) < 4 or len(data) % 2:
        return None
    major, minor, body = data[0], data[1], data[2:]
    name = "".join(chr(lo | hi << 7) for lo, hi in zip(body[::2], body[1::2], strict=True))
    if not 1 <= major <= 9 or minor > 31 or not name or not all(" " <= c <= "~" for c in name):
        return None
    return name, major, minor


class FirmataBoard(Protocol):
    """What this driver uses of a pyfirmata2 Board (pyfirmata2 has no type information)."""

    analog: list[Any]
    digital: list[Any]
    """pyfirmata2 Pins, indexed by number."""
    sp: Any
    """The pyserial port."""
    exit: Callable[[], None]

    def add_cmd_handler(self, cmd: int, func: Callable[..., None]) -> None: ...

    def send_sysex(self, sysex_cmd: int, data: bytearray) -> None: ...

    def setSamplingInterval(self, interval: int) -> None: ...  # noqa: N802 (pyfirmata2's name)

    def servo_config(self, pin: int, min_pulse: int = 544, max_pulse: int = 2400,
                     angle: int = 0) -> None: ...

    def iterate(self) -> None: ...


def firmata_class() -> Callable[..., FirmataBoard]:
    """pyfirmata2's Board on a port opened for this process alone (:func:`open_port`; pyfirmata2
    opens it shared) and without its fixed 5 s sleep (we wait for the firmware report instead),
    without its ``__del__``, which writes to the port (:func:`release` closes it instead, and a
    port that failed to open leaves nothing to clean up), and with a message cut short dropped: a
    board that resets as its port opens (DTR) can leave half a message before its boot
    announcement, which pyfirmata2 hands to a handler with the wrong arguments (TypeError), in
    its constructor as well as in our read loop; a read timeout mid-message does the same. The
    next command byte resyncs."""
    import pyfirmata2

    class Firmata(pyfirmata2.Board):  # type: ignore[misc]  # pyfirmata2 has no type information
        def __init__(self, port: str, layout: dict[str, Any], baudrate: int, timeout: float):
            """pyfirmata2's constructor with our port (it has no way to be handed one)."""
            self.samplerThread = None  # pyfirmata2's sampling thread: this driver reads itself
            self.sp = open_port(port, baudrate, timeout=timeout)
            self.name = port
            self._layout = layout
            try:
                self.setup_layout(layout)
                while self.bytes_available():
                    self.iterate()
            except BaseException:
                self.sp.close()
                raise

        def iterate(self) -> None:
            try:
                super().iterate()
            except TypeError:
                log.debug("firmata_message_dropped port=%s", self.sp.port)

        def __del__(self) -> None:
            pass

    return Firmata


def uno_layout() -> dict[str, Any]:
    from pyfirmata2 import BOARDS

    layout: dict[str, Any] = BOARDS["arduino"]
    return layout


def release(firmata: FirmataBoard) -> None:
    """Close the port; pyfirmata2's own exit() (also run from __del__) would write to it."""
    firmata.exit = lambda: None
    with contextlib.suppress(serial.SerialException, OSError):
        firmata.sp.close()


class FirmataReplies:
    """What the firmware has answered since the port opened, for the threads waiting for it:
    firmware reports, pin states and the watchdog's acknowledgement. The handlers run in the
    read thread."""

    def __init__(self, board: str):
        self.board = board
        self.ack = threading.Event()
        """Set when the firmware acknowledged an EDGE_WATCHDOG query."""
        self.reports: list[tuple[str, int, int]] = []
        """Well-formed firmware reports since the port opened, oldest first."""
        self._report_seen = threading.Condition()
        self.pin_states: dict[int, tuple[int, int]] = {}
        """(Firmata mode, value) per pin number as the firmware last answered PIN_STATE_QUERY."""
        self._pin_state_seen = threading.Condition()

    def reset(self) -> None:
        """Forget the answers of an earlier connection."""
        self.ack.clear()
        self.reports = []
        self.pin_states = {}

    def on_firmware_report(self, *data: int) -> None:
        report = plausible_report(data)
        if report is None:
            log.warning("firmware_report_garbled board=%s bytes=%s", self.board, list(data[:8]))
            return
        with self._report_seen:
            self.reports.append(report)
            self._report_seen.notify_all()

    def on_pin_state(self, *data: int) -> None:
        if len(data) < 3:
            return
        value = sum(byte << 7 * i for i, byte in enumerate(data[2:5]))
        with self._pin_state_seen:
            self.pin_states[data[0]] = (data[1], value)
            self._pin_state_seen.notify_all()

    def wait_reports(self, count: int, until: float) -> bool:
        """Wait until ``count`` well-formed firmware reports have come, or the deadline."""
        with self._report_seen:
            return self._report_seen.wait_for(
                lambda: len(self.reports) >= count, max(0.0, until - time.monotonic()))

    def forget_pin_state(self, number: int) -> None:
        with self._pin_state_seen:
            self.pin_states.pop(number, None)

    def wait_pin_state(self, number: int, timeout: float) -> tuple[int, int] | None:
        """The pin's state once the firmware has answered for it, None after ``timeout``."""
        with self._pin_state_seen:
            if self._pin_state_seen.wait_for(lambda: number in self.pin_states, timeout):
                return self.pin_states[number]
        return None


def handshake(replies: FirmataReplies, send: Send, close: Callable[[], None],
              port: str, timeout: float) -> tuple[tuple[str, int, int], bool]:
    """Wait for the firmware report, then probe for the watchdog extension: the last report and
    whether the extension answered. ``send(*sysex)`` writes commands under the port lock;
    ``close`` releases the port before a BoardUnavailable says why the board did not answer."""
    deadline = time.monotonic() + max(timeout, BOOT_SECONDS)
    while not replies.wait_reports(1, min(deadline, time.monotonic() + 0.25)):
        if time.monotonic() > deadline:
            close()
            raise BoardUnavailable(
                f"no Firmata report from {port} within "
                f"{max(timeout, BOOT_SECONDS):g} s: flash StandardFirmata "
                "or `edge-cli firmware flash arduino`")
        send((REPORT_FIRMWARE, []))
    has_watchdog = _probe_watchdog(replies, send, close, port, deadline + 1.0)
    return replies.reports[-1], has_watchdog


def _probe_watchdog(replies: FirmataReplies, send: Send, close: Callable[[], None],
                    port: str, deadline: float) -> bool:
    """Ask for the EDGE_WATCHDOG extension, fenced by a firmware report: the firmware answers
    in order, so an acknowledgement comes before the fence's report or not at all. Stock
    Firmata ignores the query; it is taken to have no watchdog after ``PROBE_ROUNDS`` fences
    (a reply to a report request from the handshake could pose as the first). A firmware that
    stops answering is an error, not a board without a watchdog."""
    time.sleep(0.05)  # replies to the handshake's requests still on the way
    unanswered = 0
    while unanswered < PROBE_ROUNDS:
        seen = len(replies.reports)
        send((EDGE_WATCHDOG, [WD_QUERY]), (REPORT_FIRMWARE, []))
        fenced = replies.wait_reports(seen + 1, min(deadline, time.monotonic() + 0.5))
        if replies.ack.is_set():
            return True
        if fenced:
            unanswered += 1
        elif time.monotonic() > deadline:
            close()
            raise BoardUnavailable(f"the firmware on {port} stopped answering during "
                                   "the handshake; check the cable and the baud rate")
    return False
