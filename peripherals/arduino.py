"""An Uno-class Arduino over Firmata, through pyfirmata2.

Works with stock StandardFirmata and with our sketch (``firmware/arduino``), whose EDGE_WATCHDOG
sysex (``firmware/PROTOCOL.md``) lets the board drive declared safe levels by itself when the host
falls silent. The driver probes for the extension after the firmware report (a query fenced by a
second firmware report, so the answer is never a guess) and, without it, keeps safety host-side
(the safe state applied on shutdown; status says so).

Opening the port resets a real Uno (DTR): the bootloader waits about 0.5 s, then StandardFirmata
blinks D13 and holds D2..D12 low for about 2 s before it answers, so the handshake allows
``BOOT_SECONDS`` plus the firmware's start.

Pins are ``D2``..``D13`` (digital; PWM on 3, 5, 6, 9, 10, 11; servo on 9 and 10) and ``A0``..``A5``
(analog inputs, reported every ``sampling_interval_ms``). ``13`` means ``D13``; D0/D1 carry the link.

>>> board = ArduinoBoard("uno", "/dev/ttyACM0", aliases={"led": "13"})
>>> board.resolve("led"), board.resolve("a0"), board.resolve("D19")
('D13', 'A0', 'A5')
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

import serial

from peripherals.base import BoardEvent, BoardStatus, PinInfo, PinMode, Pull
from peripherals.exc import BoardError, BoardUnavailable, PinModeError, UnknownPin
from peripherals.host_pins import HostPinTable
from peripherals.serial_link import open_port

log = logging.getLogger(__name__)

PWM_PINS = frozenset({3, 5, 6, 9, 10, 11})
SERVO_PINS = frozenset({9, 10})
EDGE_WATCHDOG = 0x0E
WD_DISARM, WD_ARM, WD_QUERY, WD_TRIPPED = 0, 1, 2, 3
REPORT_FIRMWARE = 0x79
PIN_STATE_QUERY, PIN_STATE_RESPONSE = 0x6D, 0x6E
FIRMATA_OUTPUT, FIRMATA_PWM = 1, 3
FIRST_VALUE_TIMEOUT = 1.0
BOOT_SECONDS = 4.0
"""Port open to Firmata answering on a real Uno: bootloader (~0.5 s) plus StandardFirmata's start
(~2.8 s in the emulator), with room to spare."""
PROBE_ROUNDS = 3
"""Watchdog probes answered by the fence alone before the sketch is taken to have no watchdog."""
QUERY_TIMEOUT = 0.3


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
    name = "".join(chr(lo | hi << 7) for lo, hi in zip(body[::2], body[1::2]))
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


def _firmata_class() -> Callable[..., FirmataBoard]:
    """pyfirmata2's Board on a port opened for this process alone (:func:`open_port`; pyfirmata2
    opens it shared) and without its fixed 5 s sleep (we wait for the firmware report instead),
    without its ``__del__``, which writes to the port (``_release`` closes it instead, and a port
    that failed to open leaves nothing to clean up), and with a message cut short dropped: a
    board that resets as its port opens (DTR) can leave half a message before its boot
    announcement, which pyfirmata2 hands to a handler with the wrong arguments (TypeError), in
    its constructor as well as in our read loop; a read timeout mid-message does the same. The
    next command byte resyncs."""
    import pyfirmata2

    class Firmata(pyfirmata2.Board):
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


def _uno_layout() -> dict[str, Any]:
    from pyfirmata2 import BOARDS

    layout: dict[str, Any] = BOARDS["arduino"]
    return layout


def _release(firmata: FirmataBoard) -> None:
    """Close the port; pyfirmata2's own exit() (also run from __del__) would write to it."""
    firmata.exit = lambda: None
    try:
        firmata.sp.close()
    except (serial.SerialException, OSError):
        pass


class ArduinoBoard(HostPinTable):
    kind = "arduino"

    def __init__(self, name: str, port: str, *, baudrate: int = 57600,
                 aliases: dict[str, str] | None = None, watchdog_ms: int = 1000,
                 sampling_interval_ms: int = 19, handshake_timeout: float = 8.0):
        """``handshake_timeout``: how long a board may take to answer after its port opens
        (at least ``BOOT_SECONDS``: the port's DTR resets it into its bootloader)."""
        super().__init__()
        self.name = name
        self.port = port
        self.baudrate = baudrate
        self.watchdog_ms = watchdog_ms
        self.sampling_interval_ms = sampling_interval_ms
        self.handshake_timeout = handshake_timeout
        self._aliases = {alias: self.canonical(spec) for alias, spec in (aliases or {}).items()}
        self._lock = threading.Lock()  # one writer on the port at a time
        self._firmata: FirmataBoard | None = None
        self._reader: threading.Thread | None = None
        self._generation = 0
        self._servos: dict[str, float] = {}
        self._safe: dict[str, bool] = {}
        self._ack = threading.Event()
        self._reports: list[tuple[str, int, int]] = []
        """Well-formed firmware reports since the port opened, oldest first."""
        self._report_seen = threading.Condition()
        self._pin_states: dict[int, tuple[int, int]] = {}
        """(Firmata mode, value) per pin number as the firmware last answered PIN_STATE_QUERY."""
        self._pin_state_seen = threading.Condition()
        self._surveyed = False
        self._servo_configured: set[str] = set()
        self.has_watchdog = False
        self.firmware = ""
        self.connected = False
        self.detail = f"not connected ({port})"

    # names ----------------------------------------------------------------------------------
    @staticmethod
    def canonical(spec: str) -> str:
        text = str(spec).strip().upper()
        if text.startswith("A") and text[1:].isdigit() and int(text[1:]) <= 5:
            return f"A{int(text[1:])}"
        number = text[1:] if text.startswith("D") else text
        if number.isdigit():
            n = int(number)
            if 2 <= n <= 13:
                return f"D{n}"
            if 14 <= n <= 19:
                return f"A{n - 14}"
            if n in (0, 1):
                raise UnknownPin(f"{spec!r}: D0 and D1 carry the serial link to the agent")
        raise UnknownPin(f"{spec!r} is not an Uno pin; use D2..D13 or A0..A5")

    def resolve(self, spec: str) -> str:
        spec = str(spec).strip()
        return self._aliases.get(spec) or self.canonical(spec)

    def capabilities(self) -> list[PinInfo]:
        pins = []
        for n in range(2, 14):
            modes = {PinMode.INPUT, PinMode.OUTPUT} | ({PinMode.PWM} if n in PWM_PINS else set())
            pins.append(PinInfo(f"D{n}", frozenset(modes), self._aliases_of(f"D{n}")))
        for n in range(6):
            pins.append(PinInfo(f"A{n}", frozenset({PinMode.ANALOG}), self._aliases_of(f"A{n}")))
        return pins

    def _aliases_of(self, pin: str) -> tuple[str, ...]:
        return tuple(a for a, p in self._aliases.items() if p == pin)

    # link ----------------------------------------------------------------------------------------
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

    def _read_loop(self, firmata: FirmataBoard, generation: int) -> None:
        while self._generation == generation:
            try:
                firmata.iterate()
            except (serial.SerialException, OSError, AttributeError) as exc:
                if self._generation == generation:
                    self._lost(f"read failed: {exc}")
                return

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

    def _lost(self, reason: str) -> None:
        was = self.connected
        self.connected = False
        self.detail = f"down: {reason}"
        self._close_port()
        if was:
            log.error("board_down board=%s port=%s reason=%r", self.name, self.port, reason)
            self._events.emit(BoardEvent(self.name, "down"))

    def _on_watchdog_sysex(self, *data: int) -> None:
        if data and data[0] == WD_TRIPPED:
            log.warning("firmware_watchdog board=%s safe=%s", self.name, self._safe)
            for pin, level in self._safe.items():
                self._values[pin] = float(level)
            self._events.emit(BoardEvent(self.name, "watchdog"))
        elif data and data[0] == WD_QUERY:
            self._ack.set()

    def _on_firmware_report(self, *data: int) -> None:
        report = plausible_report(data)
        if report is None:
            log.warning("firmware_report_garbled board=%s bytes=%s", self.name, list(data[:8]))
            return
        with self._report_seen:
            self._reports.append(report)
            self._report_seen.notify_all()

    def _on_pin_state(self, *data: int) -> None:
        if len(data) < 3:
            return
        value = sum(byte << 7 * i for i, byte in enumerate(data[2:5]))
        with self._pin_state_seen:
            self._pin_states[data[0]] = (data[1], value)
            self._pin_state_seen.notify_all()

    def _wait_reports(self, count: int, until: float) -> bool:
        """Wait until ``count`` well-formed firmware reports have come, or the deadline."""
        with self._report_seen:
            return self._report_seen.wait_for(
                lambda: len(self._reports) >= count, max(0.0, until - time.monotonic()))

    def _on_digital(self, pin: str, value: bool | None) -> None:
        level, before = 1.0 if value else 0.0, self._values.get(pin)
        if before != level:
            self._values[pin] = level
            if before is not None:  # the first report after set-up is a state, not a change
                self._input_edge(pin, level)

    def _open(self) -> None:
        """Open the port, wait for the firmware report, probe for the watchdog extension."""
        try:
            firmata = _firmata_class()(self.port, _uno_layout(), baudrate=self.baudrate,
                                       timeout=0.05)
        except (serial.SerialException, OSError) as exc:  # the first reads: the port went away
            raise BoardUnavailable(f"cannot open {self.port}: {exc}; check the cable, the port "
                                   "name (`edge-cli boards discover`) and the dialout group") from None
        firmata.add_cmd_handler(EDGE_WATCHDOG, self._on_watchdog_sysex)
        firmata.add_cmd_handler(REPORT_FIRMWARE, self._on_firmware_report)
        firmata.add_cmd_handler(PIN_STATE_RESPONSE, self._on_pin_state)
        self._firmata = firmata
        self._generation += 1
        self._ack.clear()
        self._reports = []
        self._pin_states = {}
        self._surveyed = False
        self._servo_configured = set()
        self._reader = threading.Thread(target=self._read_loop, args=(firmata, self._generation),
                                        name=f"firmata:{self.name}", daemon=True)
        self._reader.start()
        deadline = time.monotonic() + max(self.handshake_timeout, BOOT_SECONDS)
        while not self._wait_reports(1, min(deadline, time.monotonic() + 0.25)):
            if time.monotonic() > deadline:
                self._close_port()
                raise BoardUnavailable(
                    f"no Firmata report from {self.port} within "
                    f"{max(self.handshake_timeout, BOOT_SECONDS):g} s: flash StandardFirmata "
                    "or `edge-cli firmware flash arduino`")
            with self._lock:
                self._sysex(REPORT_FIRMWARE, [])
        self.has_watchdog = self._probe_watchdog(deadline + 1.0)
        name, major, minor = self._reports[-1]
        self.firmware = f"{name} {major}.{minor}"

    def _probe_watchdog(self, deadline: float) -> bool:
        """Ask for the EDGE_WATCHDOG extension, fenced by a firmware report: the firmware answers
        in order, so an acknowledgement comes before the fence's report or not at all. Stock
        Firmata ignores the query; it is taken to have no watchdog after ``PROBE_ROUNDS`` fences
        (a reply to a report request from the handshake could pose as the first). A firmware that
        stops answering is an error, not a board without a watchdog."""
        time.sleep(0.05)  # replies to the handshake's requests still on the way
        unanswered = 0
        while unanswered < PROBE_ROUNDS:
            seen = len(self._reports)
            with self._lock:
                self._sysex(EDGE_WATCHDOG, [WD_QUERY])
                self._sysex(REPORT_FIRMWARE, [])
            fenced = self._wait_reports(seen + 1, min(deadline, time.monotonic() + 0.5))
            if self._ack.is_set():
                return True
            if fenced:
                unanswered += 1
            elif time.monotonic() > deadline:
                self._close_port()
                raise BoardUnavailable(f"the firmware on {self.port} stopped answering during "
                                       "the handshake; check the cable and the baud rate")
        return False

    def _close_port(self) -> None:
        self._generation += 1
        firmata, self._firmata = self._firmata, None
        if firmata is not None:
            _release(firmata)

    # Board protocol --------------------------------------------------------------------------
    async def connect(self) -> None:
        """Open and handshake, then re-apply sampling, pin modes, levels and the watchdog (so
        this is also the reconnect path)."""
        self._events.bind(asyncio.get_running_loop())
        self._close_port()
        try:
            await asyncio.to_thread(self._open)
        except BoardError as exc:
            self.detail = f"down: {exc}"
            raise
        self.connected = True
        try:
            await asyncio.to_thread(self._restore)
        except BoardError:
            self._close_port()
            self.connected = False
            raise
        safety = "firmware watchdog" if self.has_watchdog else "host-side safe state only"
        self.detail = f"{self.firmware} on {self.port} ({safety})"
        log.info("board_connected board=%s kind=arduino detail=%r", self.name, self.detail)
        if self.has_watchdog and self.watchdog_ms:
            threading.Thread(target=self._keepalive_loop, args=(self._generation,),
                             name=f"keepalive:{self.name}", daemon=True).start()
        self._events.emit(BoardEvent(self.name, "up"))

    def _restore(self) -> None:
        self._write(lambda: self._board().setSamplingInterval(self.sampling_interval_ms))
        for pin, (mode, pull) in self._modes.items():
            value = self._values.get(pin)
            self._apply_mode(pin, mode, pull)
            if mode is PinMode.OUTPUT and value is not None:
                self._write(lambda: self._pin(pin).write(int(value)))
                self._values[pin] = value
            elif mode is PinMode.PWM and value is not None:
                self._write(lambda: self._pin(pin).write(value))
                self._values[pin] = value
        for pin, angle in self._servos.items():
            self._servo(pin, angle)  # configured again: the board may have been reset
        self._arm_watchdog()

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

    async def close(self) -> None:
        """Disarm the firmware watchdog (a clean exit has applied the safe state already) and
        release the port; levels stay as they are."""
        if self.connected and self.has_watchdog:
            try:
                self._write(lambda: self._sysex(EDGE_WATCHDOG, [WD_DISARM]))
            except BoardError as exc:
                log.warning("watchdog_disarm_failed board=%s error=%r", self.name, exc)
        self._close_port()
        reader, self._reader = self._reader, None
        if reader is not None:
            # the port is released (and a real board's DTR drops) only once the reader's last
            # read returns: until then the next open of the port would not reset the board
            await asyncio.to_thread(reader.join, 1.0)
        self.connected = False
        self.detail = f"closed ({self.port})"

    def _apply_mode(self, pin: str, mode: PinMode, pull: Pull) -> None:
        import pyfirmata2

        if pin.startswith("A"):
            analog = self._pin(pin)
            analog.register_callback(lambda v, p=pin: self._values.__setitem__(p, v))
            self._write(analog.enable_reporting)
            return
        digital = self._pin(pin)
        if mode is not PinMode.INPUT:
            firmata_mode = pyfirmata2.OUTPUT if mode is PinMode.OUTPUT else pyfirmata2.PWM
            self._values[pin] = 0.0
            self._write(lambda: setattr(digital, "mode", firmata_mode))
            return
        previous = self._values.pop(pin, None)
        digital.register_callback(lambda v, p=pin: self._on_digital(p, v))
        firmata_mode = pyfirmata2.INPUT_PULLUP if pull is Pull.UP else pyfirmata2.INPUT
        self._write(lambda: setattr(digital, "mode", firmata_mode))
        deadline = time.monotonic() + FIRST_VALUE_TIMEOUT  # the firmware reports the port now
        while self._values.get(pin) is None and time.monotonic() < deadline and self.connected:
            time.sleep(0.002)
        level = self._values.get(pin)
        if previous is not None and level is not None and level != previous:
            self._events.emit(BoardEvent(self.name, "input", pin, level))  # changed while away

    async def setup_pin(self, pin: str, mode: PinMode, pull: Pull = Pull.UP, *,
                        initial: bool = False, bounce_ms: int = 0) -> None:
        pin = self.resolve(pin)
        number = int(pin[1:])
        pull = Pull(pull)
        if pin.startswith("A") != (mode is PinMode.ANALOG):
            raise PinModeError(f"{pin} on board {self.name} cannot be {mode.value}: "
                               "A0..A5 are analog inputs, D2..D13 digital")
        if mode is PinMode.PWM and number not in PWM_PINS:
            raise PinModeError(f"{pin} has no PWM; use one of D3, D5, D6, D9, D10, D11")
        if mode is PinMode.INPUT and pull is Pull.DOWN:
            raise PinModeError(f"{pin}: the ATmega328P has pull-ups only; use pull = \"up\" or \"none\"")
        await asyncio.to_thread(self._apply_mode, pin, mode, pull)
        self._modes[pin] = (mode, pull)
        self._debounce.set(pin, bounce_ms)
        if initial and mode is not PinMode.INPUT:
            await self.write(pin, True)

    async def adopt_pin(self, pin: str, mode: PinMode, pull: Pull = Pull.UP, *,
                        initial: bool = False, bounce_ms: int = 0) -> None:
        """Like :meth:`setup_pin`, but a digital output (or PWM pin) the firmware already has in
        ``mode`` keeps its level: Firmata's PIN_STATE_QUERY tells, and setting the mode again
        would drive it low. The other pins on its port are learnt too, since a Firmata digital
        write sets a whole port."""
        pin = self.resolve(pin)
        if mode not in (PinMode.OUTPUT, PinMode.PWM) or pin.startswith("A"):
            await self.setup_pin(pin, mode, pull, initial=initial, bounce_ms=bounce_ms)
            return
        wanted = FIRMATA_OUTPUT if mode is PinMode.OUTPUT else FIRMATA_PWM
        states = await asyncio.to_thread(self._survey)
        if states.get(int(pin[1:]), (None, 0))[0] != wanted:
            await self.setup_pin(pin, mode, pull, initial=initial, bounce_ms=bounce_ms)
            return
        self._modes[pin] = (mode, Pull(pull))
        self._debounce.set(pin, bounce_ms)
        log.info("pin_adopted board=%s pin=%s level=%s", self.name, pin, self._values.get(pin))

    def _query_pin(self, number: int) -> tuple[int, int] | None:
        """(Firmata mode, value) of a pin as the firmware has it, None if it does not answer."""
        with self._pin_state_seen:
            self._pin_states.pop(number, None)
        for _ in range(2):
            self._write(lambda: self._sysex(PIN_STATE_QUERY, [number]))
            with self._pin_state_seen:
                if self._pin_state_seen.wait_for(lambda: number in self._pin_states, QUERY_TIMEOUT):
                    return self._pin_states[number]
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
        return dict(self._pin_states)

    async def read(self, pin: str) -> float:
        """Inputs report by themselves (Firmata has no polled read): the latest report."""
        pin = self.resolve(pin)
        self._mode(pin)
        if not self.connected:
            raise BoardUnavailable(f"board {self.name} is down ({self.detail})")
        deadline = time.monotonic() + FIRST_VALUE_TIMEOUT
        while (value := self._values.get(pin)) is None:
            if time.monotonic() > deadline:
                raise BoardUnavailable(f"board {self.name} sent no value for {pin} yet")
            await asyncio.sleep(0.01)
        return float(value)

    async def write(self, pin: str, value: bool) -> None:
        pin = self.resolve(pin)
        level = 1.0 if value else 0.0
        if self._mode(pin, PinMode.OUTPUT, PinMode.PWM) is PinMode.PWM:
            await asyncio.to_thread(self._write, lambda: self._pin(pin).write(level))
        else:
            await asyncio.to_thread(self._write, lambda: self._pin(pin).write(int(level)))
        self._values[pin] = level

    async def pwm(self, pin: str, duty: float, frequency: float | None = None) -> None:
        if not 0.0 <= duty <= 1.0:
            raise PinModeError(f"duty {duty} is outside 0..1")
        if frequency is not None:
            raise PinModeError("Firmata PWM runs at the Uno's fixed 490/980 Hz; leave frequency out")
        pin = self.resolve(pin)
        self._mode(pin, PinMode.PWM)
        await asyncio.to_thread(self._write, lambda: self._pin(pin).write(duty))
        self._values[pin] = duty

    def _servo(self, pin: str, angle: float) -> None:
        number = int(pin[1:])
        if pin not in self._servo_configured:
            self._write(lambda: self._board().servo_config(number, angle=int(angle)))
            self._servo_configured.add(pin)
        else:
            self._write(lambda: self._pin(pin).write(int(angle)))
        self._servos[pin] = angle

    async def servo(self, pin: str, angle: float) -> None:
        """Turn a hobby servo on D9 or D10 to ``angle`` degrees (0..180)."""
        pin = self.resolve(pin)
        if pin.startswith("A") or int(pin[1:]) not in SERVO_PINS:
            raise PinModeError(f"{pin}: servos run on D9 and D10 (Timer1)")
        if not 0 <= angle <= 180:
            raise PinModeError(f"angle {angle} is outside 0..180")
        await asyncio.to_thread(self._servo, pin, angle)

    def status(self) -> BoardStatus:
        """As :class:`HostPinTable`'s, with what keeps the outputs safe if the host dies."""
        status = super().status()
        if not self.connected:
            return status
        status.info["firmware"] = self.firmware
        status.info["watchdog"] = "firmware" if self.has_watchdog else "none"
        outputs = [p for p, (mode, _) in self._modes.items() if mode in (PinMode.OUTPUT, PinMode.PWM)]
        if outputs and not self.has_watchdog:
            status.info["warning"] = (
                f"{self.firmware} has no firmware watchdog: if the agent is killed or the Pi "
                f"hangs, {', '.join(outputs)} stay as they are until the agent is back; flash "
                "ours (`edge-cli firmware flash arduino`) so the board drives the safe levels "
                "by itself")
        return status

    async def declare_safe_state(self, values: dict[str, bool]) -> None:
        """Safe levels the firmware drives by itself if the host falls silent (our sketch only;
        with StandardFirmata they stay host-side)."""
        self._safe = {self.resolve(pin): bool(level) for pin, level in values.items()}
        if self.connected:
            await asyncio.to_thread(self._arm_watchdog)
