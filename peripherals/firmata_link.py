"""The host's end of a Firmata connection, the base of :class:`~peripherals.arduino.ArduinoBoard`:
the port and its write lock, the read thread, the handshake (:mod:`peripherals.firmata`), a lost
link reported as the board going down, the firmware watchdog armed and kept alive, and the pin
states the firmware reports.

Every write runs under the port lock; a failed read or write closes the port, and the
``generation`` counter, bumped whenever the port opens or closes, tells the read and keep-alive
threads of an earlier connection to stop.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

import serial

from peripherals.base import BoardEvent
from peripherals.exc import BoardError, BoardUnavailable
from peripherals.firmata import (
    EDGE_WATCHDOG,
    FIRMATA_OUTPUT,
    FIRMATA_PWM,
    PIN_STATE_QUERY,
    PIN_STATE_RESPONSE,
    REPORT_FIRMWARE,
    WD_ARM,
    WD_DISARM,
    WD_QUERY,
    WD_TRIPPED,
    FirmataBoard,
    FirmataReplies,
    Sysex,
    firmata_class,
    handshake,
    release,
    uno_layout,
)
from peripherals.host_pins import HostPinTable

log = logging.getLogger(__name__)

QUERY_TIMEOUT = 0.3


class FirmataLink(HostPinTable):
    """A board behind a Firmata link; the subclass is the Board (pins, modes, levels)."""

    def __init__(self, name: str, port: str, *, baudrate: int, watchdog_ms: int,
                 handshake_timeout: float):
        super().__init__()
        self.name = name
        self.port = port
        self.baudrate = baudrate
        self.watchdog_ms = watchdog_ms
        self.handshake_timeout = handshake_timeout
        self._lock = threading.Lock()  # one writer on the port at a time
        self._firmata: FirmataBoard | None = None
        self._reader: threading.Thread | None = None
        self._generation = 0
        self._safe: dict[str, bool] = {}
        """Levels the firmware watchdog drives when the host falls silent."""
        self._replies = FirmataReplies(name)
        self._surveyed = False
        self.has_watchdog = False
        self.firmware = ""
        self.connected = False
        self.detail = f"not connected ({port})"

    # the port ----------------------------------------------------------------------------------
    def _board(self) -> FirmataBoard:
        """The open pyfirmata2 board; BoardUnavailable while the port is closed (the reader
        thread closes it when the link fails, at any moment)."""
        firmata = self._firmata
        if firmata is None:
            raise self._down()
        return firmata

    def _pin(self, pin: str) -> Any:
        """The pyfirmata2 Pin (untyped) for ``D<n>`` or ``A<n>``."""
        firmata = self._board()
        if pin.startswith("A"):
            return firmata.analog[int(pin[1:])]
        return firmata.digital[int(pin[1:])]

    def _write(self, action: Callable[[], object]) -> None:
        """Run ``action`` (which writes to the port) under the port lock; a failure means gone."""
        if not self.connected or self._firmata is None:
            raise self._down()
        with self._lock:
            try:
                action()
            except (serial.SerialException, OSError) as exc:
                self._lost(f"write failed: {exc}")
                raise BoardUnavailable(f"board {self.name} went away ({exc})") from None

    def _sysex(self, cmd: int, data: list[int]) -> None:
        self._board().send_sysex(cmd, bytearray(data))

    def _send(self, *commands: Sysex) -> None:
        """The handshake's requests, written in one hold of the port lock."""
        with self._lock:
            for cmd, data in commands:
                self._sysex(cmd, data)

    def _read_loop(self, firmata: FirmataBoard, generation: int) -> None:
        while self._generation == generation:
            try:
                firmata.iterate()
            except (serial.SerialException, OSError, AttributeError) as exc:
                if self._generation == generation:
                    self._lost(f"read failed: {exc}")
                return

    def _lost(self, reason: str) -> None:
        was = self.connected
        self.connected = False
        self.detail = f"down: {reason}"
        self._close_port()
        if was:
            log.error("board_down board=%s port=%s reason=%r", self.name, self.port, reason)
            self._events.emit(BoardEvent(self.name, "down"))

    def _open(self) -> None:
        """Open the port, wait for the firmware report, probe for the watchdog extension."""
        try:
            firmata = firmata_class()(self.port, uno_layout(), baudrate=self.baudrate,
                                      timeout=0.05)
        except (serial.SerialException, OSError) as exc:  # the first reads: the port went away
            raise BoardUnavailable(f"cannot open {self.port}: {exc}; check the cable, the port "
                                   "name (`edge-cli boards discover`) and the dialout group") from None
        firmata.add_cmd_handler(EDGE_WATCHDOG, self._on_watchdog_sysex)
        firmata.add_cmd_handler(REPORT_FIRMWARE, self._replies.on_firmware_report)
        firmata.add_cmd_handler(PIN_STATE_RESPONSE, self._replies.on_pin_state)
        self._firmata = firmata
        self._generation += 1
        self._forget_connection()
        self._reader = threading.Thread(target=self._read_loop, args=(firmata, self._generation),
                                        name=f"firmata:{self.name}", daemon=True)
        self._reader.start()
        (name, major, minor), self.has_watchdog = handshake(
            self._replies, self._send, self._close_port, self.port, self.handshake_timeout)
        self.firmware = f"{name} {major}.{minor}"

    def _forget_connection(self) -> None:
        """Forget what the firmware answered on an earlier connection (a subclass extends it
        with what it learnt itself)."""
        self._replies.reset()
        self._surveyed = False

    def _close_port(self) -> None:
        self._generation += 1
        firmata, self._firmata = self._firmata, None
        if firmata is not None:
            release(firmata)

    # the firmware watchdog (our sketch only) ---------------------------------------------
    def _on_watchdog_sysex(self, *data: int) -> None:
        if data and data[0] == WD_TRIPPED:
            log.warning("firmware_watchdog board=%s safe=%s", self.name, self._safe)
            for pin, level in self._safe.items():
                self._values[pin] = float(level)
            self._events.emit(BoardEvent(self.name, "watchdog"))
        elif data and data[0] == WD_QUERY:
            self._replies.ack.set()

    def _keepalive_loop(self, generation: int) -> None:
        """Any byte restarts the firmware watchdog; the query costs four bytes each way."""
        while self._generation == generation:
            time.sleep(self.watchdog_ms / 3000)
            if self._generation != generation:
                return
            try:
                self._write(lambda: self._sysex(EDGE_WATCHDOG, [WD_QUERY]))
            except BoardError:
                return

    def _arm_watchdog(self) -> None:
        if not self.has_watchdog:
            return
        if not self.watchdog_ms:
            self._write(lambda: self._sysex(EDGE_WATCHDOG, [WD_DISARM]))
            return
        data = [WD_ARM, self.watchdog_ms & 0x7F, self.watchdog_ms >> 7 & 0x7F]
        for pin, level in self._safe.items():
            data += [int(pin[1:]), int(level)]
        self._write(lambda: self._sysex(EDGE_WATCHDOG, data))

    # what the firmware already drives ----------------------------------------------------
    def _query_pin(self, number: int) -> tuple[int, int] | None:
        """(Firmata mode, value) of a pin as the firmware has it, None if it does not answer."""
        self._replies.forget_pin_state(number)
        for _ in range(2):
            self._write(lambda: self._sysex(PIN_STATE_QUERY, [number]))
            state = self._replies.wait_pin_state(number, QUERY_TIMEOUT)
            if state is not None:
                return state
        return None

    def _survey(self) -> dict[int, tuple[int, int]]:
        """Learn the mode and level of every digital pin once per connection, and tell
        pyfirmata2 about the outputs, so its port-wide writes keep their levels."""
        if not self._surveyed:
            firmata = self._board()
            for number in range(2, 14):
                state = self._query_pin(number)
                if state is None:
                    continue
                firmata_mode, value = state
                digital = firmata.digital[number]
                if firmata_mode == FIRMATA_OUTPUT:
                    digital._mode, digital.value = firmata_mode, int(bool(value))
                    self._values[f"D{number}"] = float(bool(value))
                elif firmata_mode == FIRMATA_PWM:
                    digital._mode, digital.value = firmata_mode, value / 255
                    self._values[f"D{number}"] = value / 255
            self._surveyed = True
        return dict(self._replies.pin_states)
