"""An Uno-class Arduino over Firmata, through pyfirmata2.

Works with stock StandardFirmata and with our sketch (``firmware/arduino``), whose EDGE_WATCHDOG
sysex (``firmware/PROTOCOL.md``) lets the board drive declared safe levels by itself when the host
falls silent. The handshake (:mod:`peripherals.firmata`) probes for the extension after the
firmware report; without it, this driver keeps safety host-side (the safe state applied on
shutdown; status says so). The link itself (port, read thread, keep-alives, a lost link) is
:class:`~peripherals.firmata_link.FirmataLink`'s, the base of :class:`ArduinoBoard`.

Opening the port resets a real Uno (DTR): the bootloader waits about 0.5 s, then StandardFirmata
blinks D13 and holds D2..D12 low for about 2 s before it answers, so the handshake allows
``firmata.BOOT_SECONDS`` plus the firmware's start.

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

from peripherals.base import BoardEvent, BoardStatus, PinInfo, PinMode, Pull
from peripherals.exc import BoardError, BoardUnavailable, PinModeError
from peripherals.firmata import EDGE_WATCHDOG, FIRMATA_OUTPUT, FIRMATA_PWM, WD_DISARM
from peripherals.firmata_link import FirmataLink
from peripherals.servo import ServoOptions, declared_servos
from peripherals.uno_layout import PWM_PINS, SERVO_PINS, SERVO_PULSE_US, uno_pin_name

log = logging.getLogger(__name__)

FIRST_VALUE_TIMEOUT = 1.0


class ArduinoBoard(FirmataLink):
    kind = "arduino"
    servo_pins = SERVO_PINS
    """Firmata's Servo library runs on Timer1, whose outputs are D9 and D10."""

    def __init__(self, name: str, port: str, *, baudrate: int = 57600,
                 aliases: dict[str, str] | None = None, watchdog_ms: int = 1000,
                 sampling_interval_ms: int = 19, handshake_timeout: float = 8.0,
                 servos: dict[str, ServoOptions] | None = None):
        """``servos``: the calibration of servos on D9/D10 (any not named takes 0..180 degrees
        and the Servo library's pulses). ``handshake_timeout``: how long a board may take to answer after its port opens
        (at least ``firmata.BOOT_SECONDS``: the port's DTR resets it into its bootloader)."""
        super().__init__(name, port, baudrate=baudrate, watchdog_ms=watchdog_ms,
                         handshake_timeout=handshake_timeout)
        self.sampling_interval_ms = sampling_interval_ms
        self._aliases = {alias: self.canonical(spec) for alias, spec in (aliases or {}).items()}
        self._servos: dict[str, float] = {}
        self._calibration = declared_servos(servos or {}, self.resolve)
        self._servo_configured: set[str] = set()

    # names ----------------------------------------------------------------------------------
    @staticmethod
    def canonical(spec: str) -> str:
        return uno_pin_name(spec)

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
    def _forget_connection(self) -> None:
        super()._forget_connection()
        self._servo_configured = set()

    def _on_digital(self, pin: str, value: bool | None) -> None:
        level, before = 1.0 if value else 0.0, self._values.get(pin)
        if before != level:
            self._values[pin] = level
            if before is not None:  # the first report after set-up is a state, not a change
                self._input_edge(pin, level)

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
                self._put(pin, int(value))
                self._values[pin] = value
            elif mode is PinMode.PWM and value is not None:
                self._put(pin, value)
                self._values[pin] = value
        for pin, angle in self._servos.items():
            self._servo(pin, angle)  # configured again: the board may have been reset
        self._arm_watchdog()

    def _put(self, pin: str, value: float) -> None:
        """Write ``value`` (a level for an output, a duty for PWM) to the pin under the port lock."""
        self._write(lambda: self._pin(pin).write(value))

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

    async def read(self, pin: str) -> float:
        """Inputs report by themselves (Firmata has no polled read): the latest report. A
        digital output is asked of the firmware (Firmata's pin state query), so what it reports
        is what the board drives, not what this driver last asked for."""
        pin = self.resolve(pin)
        mode = self._mode(pin)
        if not self.connected:
            raise BoardUnavailable(f"board {self.name} is down ({self.detail})")
        if mode is PinMode.OUTPUT:
            state = await asyncio.to_thread(self._query_pin, int(pin[1:]))
            if state is not None:
                self._values[pin] = float(bool(state[1]))
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
        servo = self._calibration.get(pin, ServoOptions())
        low, high = servo.pulses(SERVO_PULSE_US)
        turn = round(servo.fraction(angle) * 180)  # the Servo library spans 0..180 over the pulses
        if pin not in self._servo_configured:
            self._write(lambda: self._board().servo_config(number, min_pulse=low, max_pulse=high,
                                                           angle=turn))
            self._servo_configured.add(pin)
        else:
            self._write(lambda: self._pin(pin).write(turn))
        self._servos[pin] = angle

    async def servo(self, pin: str, angle: float) -> None:
        """Turn a hobby servo on D9 or D10 to ``angle`` degrees (0..180)."""
        pin = self.resolve(pin)
        if pin not in self.servo_pins:
            raise PinModeError(f"{pin}: servos run on D9 and D10 (Timer1)")
        self._calibration.get(pin, ServoOptions()).check(pin, angle)
        await asyncio.to_thread(self._servo, pin, angle)

    async def apply_safe_state(self, values: dict[str, bool]) -> list[str]:
        """As :class:`HostPinTable`'s, except that a servo with a ``safe_angle`` turns there."""
        failed = []
        for spec, level in values.items():
            pin = self.resolve(spec)
            safe = self._calibration[pin].safe_angle if pin in self._calibration else None
            if safe is None or pin not in self._servos:
                failed += await super().apply_safe_state({spec: level})
                continue
            try:
                await asyncio.to_thread(self._servo, pin, safe)
            except BoardError as exc:
                log.error("safe_state_failed board=%s pin=%s error=%r", self.name, spec, exc)
                failed.append(spec)
        return failed

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
