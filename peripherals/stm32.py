"""An STM32 board running edge-agent's firmware (``firmware/stm32``), over pyserial.

The wire format is ``firmware/PROTOCOL.md``, coded in :mod:`peripherals.stm32_protocol`. Pins are
named ``PA5``, ``PC13``... and by aliases; the handshake tells which pins exist and what each can
do. The firmware watchdog drives the declared safe values by itself when the host falls silent;
while connected, a keep-alive ping is sent whenever no request went out for a third of its timeout.

>>> board = Stm32Board("nucleo", "socket://127.0.0.1:5555", aliases={"led": "PA5"})
>>> board.resolve("led"), board.resolve("pc13")
('PA5', 'PC13')
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from typing import Any

from peripherals import stm32_protocol as wire
from peripherals.base import BoardEvent, BoardStatus, PinInfo, PinMode, Pull
from peripherals.exc import BoardError, BoardUnavailable, PinModeError, UnknownPin
from peripherals.host_pins import HostPinTable
from peripherals.serial_link import SerialLink

log = logging.getLogger(__name__)

CAPS_TO_MODES = {wire.Caps.DIGITAL_IN: PinMode.INPUT, wire.Caps.DIGITAL_OUT: PinMode.OUTPUT,
                 wire.Caps.PWM: PinMode.PWM, wire.Caps.ANALOG: PinMode.ANALOG}
MODES_TO_CAPS = {mode: cap for cap, mode in CAPS_TO_MODES.items()}
ADC_FULL_SCALE = 4095


def wire_mode(mode: PinMode, pull: Pull) -> wire.Mode:
    if mode is PinMode.INPUT:
        return {Pull.UP: wire.Mode.INPUT_PULLUP, Pull.DOWN: wire.Mode.INPUT_PULLDOWN,
                Pull.NONE: wire.Mode.INPUT}[Pull(pull)]
    return {PinMode.OUTPUT: wire.Mode.OUTPUT, PinMode.PWM: wire.Mode.PWM,
            PinMode.ANALOG: wire.Mode.ANALOG}[mode]


class FirmwareError(BoardError):
    """The firmware refused a request; ``code`` is a :class:`~peripherals.stm32_protocol.ErrorCode`."""

    def __init__(self, message: str, code: int):
        super().__init__(message)
        self.code = code


class Stm32Board(HostPinTable):
    kind = "stm32"

    def __init__(self, name: str, port: str, *, baudrate: int = 115200,
                 aliases: dict[str, str] | None = None, watchdog_ms: int = 1000,
                 request_timeout: float = 0.5, handshake_timeout: float = 3.0):
        super().__init__()
        self.name = name
        self.port = port
        self.watchdog_ms = watchdog_ms
        self.request_timeout = request_timeout
        self.handshake_timeout = handshake_timeout
        self._aliases = {alias: self.canonical(spec) for alias, spec in (aliases or {}).items()}
        self._link = SerialLink(port, baudrate, self._on_bytes, self._on_lost)
        self._reader = wire.FrameReader()
        self._next_id = 0
        self._waiting: tuple[int, threading.Event, list[wire.Message]] | None = None
        self._last_tx = 0.0
        self._caps: dict[str, wire.Caps] = {}
        self._safe: dict[str, bool] = {}
        self._generation = 0
        self.hello: wire.Fields = {}
        self.connected = False
        self.detail = f"not connected ({port})"

    # names -------------------------------------------------------------------------------
    @staticmethod
    def canonical(spec: str) -> str:
        try:
            return wire.pin_name(wire.pin_number(spec))
        except ValueError as exc:
            raise UnknownPin(str(exc)) from None

    def resolve(self, spec: str) -> str:
        spec = str(spec).strip()
        pin = self._aliases.get(spec) or self.canonical(spec)
        if self._caps and pin not in self._caps:
            raise UnknownPin(f"{pin} is not available on board {self.name} "
                             f"(it has {', '.join(self._caps)})")
        return pin

    def capabilities(self) -> list[PinInfo]:
        return [PinInfo(pin, frozenset(m for c, m in CAPS_TO_MODES.items() if caps & c),
                        tuple(a for a, p in self._aliases.items() if p == pin))
                for pin, caps in self._caps.items()]

    # link ----------------------------------------------------------------------------------
    def _on_bytes(self, data: bytes) -> None:
        for message in self._reader.feed(data):
            if message.is_event:
                self._on_event(message)
                continue
            waiting = self._waiting
            if waiting and waiting[0] == message.id:
                waiting[2].append(message)
                waiting[1].set()

    def _on_event(self, message: wire.Message) -> None:
        if message.type == wire.Event.INPUT_CHANGED:
            pin = wire.pin_name(message.fields["pin"])
            self._values[pin] = float(message.fields["level"])
            self._input_edge(pin, float(message.fields["level"]))
        else:
            log.warning("firmware_watchdog board=%s safe=%s", self.name, self._safe)
            for pin, level in self._safe.items():
                self._values[pin] = float(level)
            self._events.emit(BoardEvent(self.name, "watchdog"))

    def _on_lost(self, reason: str) -> None:
        was = self.connected
        self.connected = False
        self.detail = f"down: {reason}"
        waiting = self._waiting
        if waiting:
            waiting[1].set()
        if was:
            log.error("board_down board=%s port=%s reason=%r", self.name, self.port, reason)
            self._events.emit(BoardEvent(self.name, "down"))

    def _request(self, cmd: wire.Cmd, timeout: float | None = None,
                 **fields: Any) -> wire.Fields:
        """Send one request and wait for its reply (blocking; run in a thread)."""
        if not self._link.is_open:
            raise self._down()
        with self._link.lock:
            self._next_id = self._next_id % 255 + 1
            done = threading.Event()
            box: list[wire.Message] = []
            self._waiting = (self._next_id, done, box)
            try:
                self._link.write(wire.encode_request(cmd, self._next_id, **fields))
                self._last_tx = time.monotonic()
                if not done.wait(timeout or self.request_timeout) or not box:
                    if not self._link.is_open:
                        raise BoardUnavailable(f"board {self.name} went away ({self.detail})")
                    raise BoardUnavailable(f"board {self.name} did not answer {cmd.name} within "
                                           f"{timeout or self.request_timeout:g} s")
            finally:
                self._waiting = None
        reply = box[0]
        if reply.is_error:
            code = reply.fields["code"]
            name = wire.ErrorCode(code).name if code in wire.ErrorCode._value2member_map_ else code
            raise FirmwareError(f"board {self.name} refused {cmd.name}: {name}", code)
        return reply.fields

    async def _call(self, cmd: wire.Cmd, **fields: Any) -> wire.Fields:
        return await asyncio.to_thread(self._request, cmd, **fields)

    def _handshake(self) -> wire.Fields:
        """HELLO until answered: the firmware may still be booting, or mid-frame from before."""
        deadline = time.monotonic() + self.handshake_timeout
        while True:
            self._link.write(b"\x00")  # end whatever partial frame the firmware holds
            try:
                return self._request(wire.Cmd.HELLO, timeout=0.25, version=wire.PROTOCOL_VERSION)
            except FirmwareError as exc:
                raise BoardUnavailable(f"board {self.name} speaks another protocol version "
                                       f"({exc}); flash firmware from this release") from None
            except BoardUnavailable:
                if time.monotonic() > deadline or not self._link.is_open:
                    raise BoardUnavailable(
                        f"no handshake from {self.port} within {self.handshake_timeout:g} s: is "
                        "edge-agent firmware flashed (`edge-cli firmware flash`)?") from None

    def _keepalive_loop(self, generation: int) -> None:
        interval, link = self.watchdog_ms / 3000, self._link
        while self._generation == generation and link.is_open:
            time.sleep(interval / 4)
            if time.monotonic() - self._last_tx >= interval and link.lock.acquire(blocking=False):
                try:
                    link.write(wire.encode_request(wire.Cmd.PING, 0))  # reply id 0 is ignored
                    self._last_tx = time.monotonic()
                except BoardUnavailable:
                    return
                finally:
                    link.lock.release()

    # Board protocol ----------------------------------------------------------------------------
    async def connect(self) -> None:
        """Open, handshake, then re-apply watchdog, safe values, pin modes and levels (so this is
        also the reconnect path)."""
        self._events.bind(asyncio.get_running_loop())
        self._generation += 1
        self._link.close()
        self._reader = wire.FrameReader()
        try:
            self._link.open()
            hello = await asyncio.to_thread(self._handshake)
            self.hello = hello
            self._caps = {wire.pin_name(p): wire.Caps(c) for p, c in hello["pairs"]}
            await self._restore()
        except BaseException as exc:
            self._link.close()
            if isinstance(exc, BoardError):
                self.detail = f"down: {exc}"
            raise
        self.connected = True
        board = wire.BOARD_IDS.get(hello["board"], f"board id {hello['board']}")
        self.detail = (f"{board}, firmware {hello['fw_major']}.{hello['fw_minor']}, "
                       f"protocol {hello['protocol']} on {self.port}")
        log.info("board_connected board=%s kind=stm32 detail=%r", self.name, self.detail)
        if self.watchdog_ms:
            threading.Thread(target=self._keepalive_loop, args=(self._generation,),
                             name=f"keepalive:{self.name}", daemon=True).start()
        self._events.emit(BoardEvent(self.name, "up"))

    async def _restore(self) -> None:
        if self._safe:
            await self._send_safe_values()
        for pin, (mode, pull) in self._modes.items():
            value = self._values.get(pin)
            await self._apply_mode(pin, mode, pull)
            if mode is PinMode.OUTPUT and value is not None:
                await self._call(wire.Cmd.DIGITAL_WRITE, pin=wire.pin_number(pin), level=int(value))
            elif mode is PinMode.PWM and value is not None:
                await self._pwm(pin, value, 0)
        await self._call(wire.Cmd.WATCHDOG, timeout_ms=self.watchdog_ms)

    async def close(self) -> None:
        """Disarm the firmware watchdog (a clean exit has already applied the safe state) and
        release the port. Levels stay as they are."""
        if self._link.is_open:
            try:
                await self._call(wire.Cmd.WATCHDOG, timeout_ms=0)
            except BoardError as exc:
                log.warning("watchdog_disarm_failed board=%s error=%r", self.name, exc)
        self._generation += 1
        self._link.close()
        self.connected = False
        self.detail = f"closed ({self.port})"

    async def _apply_mode(self, pin: str, mode: PinMode, pull: Pull) -> None:
        number = wire.pin_number(pin)
        await self._call(wire.Cmd.PIN_MODE, pin=number, mode=wire_mode(mode, pull))
        if mode is PinMode.INPUT:
            reply = await self._call(wire.Cmd.SUBSCRIBE, pin=number, on=1)
            self._values[pin] = float(reply["level"])
        elif mode in (PinMode.OUTPUT, PinMode.PWM):
            self._values[pin] = 0.0

    async def setup_pin(self, pin: str, mode: PinMode, pull: Pull = Pull.UP, *,
                        initial: bool = False, bounce_ms: int = 0) -> None:
        pin = self.resolve(pin)
        caps = self._caps.get(pin)
        if caps is not None and MODES_TO_CAPS[mode] not in caps:
            raise PinModeError(f"{pin} on board {self.name} cannot be {mode.value}")
        await self._apply_mode(pin, mode, Pull(pull))
        self._modes[pin] = (mode, Pull(pull))
        self._debounce.set(pin, bounce_ms)
        if initial and mode is not PinMode.INPUT:
            await self.write(pin, True)

    async def adopt_pin(self, pin: str, mode: PinMode, pull: Pull = Pull.UP, *,
                        initial: bool = False, bounce_ms: int = 0) -> None:
        """Like :meth:`setup_pin`, but an output the firmware already has keeps its level:
        DIGITAL_READ answers the level an output was last driven to, and DIGITAL_WRITE of that
        same level is accepted only by an output (PIN_MODE would start it low)."""
        pin = self.resolve(pin)
        if mode is not PinMode.OUTPUT:
            await self.setup_pin(pin, mode, pull, initial=initial, bounce_ms=bounce_ms)
            return
        number = wire.pin_number(pin)
        try:
            level = (await self._call(wire.Cmd.DIGITAL_READ, pin=number))["level"]
            await self._call(wire.Cmd.DIGITAL_WRITE, pin=number, level=level)
        except FirmwareError:  # not set up since the board started, or not an output
            await self.setup_pin(pin, mode, pull, initial=initial, bounce_ms=bounce_ms)
            return
        self._modes[pin] = (mode, Pull(pull))
        self._values[pin] = float(level)
        self._debounce.set(pin, bounce_ms)
        log.info("pin_adopted board=%s pin=%s level=%s", self.name, pin, level)

    async def read(self, pin: str) -> float:
        pin = self.resolve(pin)
        mode = self._mode(pin)
        if mode is PinMode.ANALOG:
            reply = await self._call(wire.Cmd.ADC_READ, pin=wire.pin_number(pin))
            raw: int = reply["raw"]
            return raw / ADC_FULL_SCALE
        if mode is PinMode.PWM:
            duty = self._values.get(pin)
            return 0.0 if duty is None else duty
        reply = await self._call(wire.Cmd.DIGITAL_READ, pin=wire.pin_number(pin))
        return float(reply["level"])

    async def write(self, pin: str, value: bool) -> None:
        pin = self.resolve(pin)
        if self._mode(pin, PinMode.OUTPUT, PinMode.PWM) is PinMode.PWM:
            await self._pwm(pin, 1.0 if value else 0.0, 0)
            return
        await self._call(wire.Cmd.DIGITAL_WRITE, pin=wire.pin_number(pin), level=int(bool(value)))
        self._values[pin] = float(bool(value))

    async def _pwm(self, pin: str, duty: float, frequency: int) -> None:
        await self._call(wire.Cmd.PWM_WRITE, pin=wire.pin_number(pin), duty=round(duty * 10000),
                         frequency=frequency)
        self._values[pin] = duty

    async def pwm(self, pin: str, duty: float, frequency: float | None = None) -> None:
        if not 0.0 <= duty <= 1.0:
            raise PinModeError(f"duty {duty} is outside 0..1")
        if frequency is not None and not 1 <= frequency <= 65535:
            raise PinModeError(f"frequency {frequency} must be 1..65535 Hz on board {self.name}")
        pin = self.resolve(pin)
        self._mode(pin, PinMode.PWM)
        await self._pwm(pin, duty, int(frequency or 0))

    def status(self) -> BoardStatus:
        """As :class:`HostPinTable`'s, with the firmware version and board the handshake reported."""
        status = super().status()
        if self.connected and self.hello:
            status.info["firmware"] = f"{self.hello['fw_major']}.{self.hello['fw_minor']}"
            status.info["board"] = wire.BOARD_IDS.get(self.hello["board"], str(self.hello["board"]))
        return status

    async def declare_safe_state(self, values: dict[str, bool]) -> None:
        """Tell the firmware which level each output must fall back to when the host is gone."""
        self._safe = {self.resolve(pin): bool(level) for pin, level in values.items()}
        await self._send_safe_values()

    async def _send_safe_values(self) -> None:
        pairs = [(wire.pin_number(pin), int(level)) for pin, level in self._safe.items()]
        await self._call(wire.Cmd.SAFE_STATE, pairs=pairs)

    async def stats(self) -> wire.Fields:
        """Frames the firmware received, bad frames it dropped, watchdog trips."""
        return await self._call(wire.Cmd.STATS)
