"""The Raspberry Pi header as a board, through gpiozero.

Pins are named the gpiozero way (``GPIO17``, ``17``, ``BCM17``, ``BOARD11``, ``J8:11``) and by
aliases. ``simulate=True`` is the only way to get gpiozero's
:class:`~gpiozero.pins.mock.MockFactory`; otherwise the board drives the real header through the
configured pin factory (lgpio on every supported Pi), and when that cannot load the board is
*down* with the cause and the fix in its status, never quietly simulated.

Levels at this layer are electrical: 1 is a high line, 0 a low one (PWM: the duty of the high
phase). Active-low wiring is the caller's business (:class:`edge.hardware.Hardware`).

>>> board = GpioBoard("gpio", simulate=True, aliases={"led": "GPIO17"})
>>> board.resolve("BOARD11"), board.resolve("led")
('GPIO17', 'GPIO17')
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from gpiozero import AngularServo, DigitalInputDevice, DigitalOutputDevice, PWMOutputDevice
from gpiozero.devices import Device
from gpiozero.exc import GPIOZeroError, PinInvalidPin
from gpiozero.pins.mock import MockFactory, MockPWMPin
from gpiozero.pins.pi import PiBoardInfo

from peripherals.base import Board, BoardEvent, BoardListener, BoardStatus, PinInfo, PinMode, PinState, Pull
from peripherals.events import Debouncer, EventHub
from peripherals.exc import BoardUnavailable, PinModeError, UnknownPin
from peripherals.header_layout import HEADER_GPIO, SERVO_PULSE_US
from peripherals.pin_factory import LoadedFactory, describe_chip, load_pin_factory
from peripherals.servo import ServoOptions, declared_servos

log = logging.getLogger(__name__)

ALL_MODES = frozenset({PinMode.INPUT, PinMode.OUTPUT, PinMode.PWM})  # the Pi has no ADC
DEFAULT_PWM_FREQUENCY = 100.0
HEADER_NAMES = PiBoardInfo.from_revision(0xC03114)
"""Pin names of the 40-pin header (every Pi since the B+), for naming pins while the real
factory is unavailable: config errors are still reported against the right names."""


class GpioBoard(Board):
    """The Pi's 40-pin header. ``pin_factory`` may be given to share a factory (tests).

    ``servos`` declares the pins that drive hobby servos (gpiozero's AngularServo): such a pin,
    set up as pwm, sends no pulse until it is given an angle, and takes angles only.

    >>> arm = GpioBoard("gpio", servos={"18": ServoOptions(max_angle=90)})
    >>> sorted(arm.servos)
    ['GPIO18']
    """

    kind = "gpio"
    servo_pins = HEADER_GPIO
    holds_levels = False
    """The kernel gives no guarantee about a line once the process that drove it exits."""

    def __init__(
        self,
        name: str = "gpio",
        *,
        simulate: bool = True,
        aliases: dict[str, str] | None = None,
        pin_factory: Any = None,
        factory_name: str = "auto",
        servos: dict[str, ServoOptions] | None = None,
    ):
        self.name = name
        self.factory_name = factory_name
        self.factory: Any = None
        self._loaded: LoadedFactory | None = None
        """The real factory this board loaded (and must release), if any."""
        self.simulated = False
        self.info: dict[str, str] = {}
        self.detail = ""
        self.error = ""
        """Why the real header cannot be driven ('' when it can)."""
        if pin_factory is not None:
            self._use(pin_factory, isinstance(pin_factory, MockFactory))
        elif simulate:
            self._use(MockFactory(pin_class=MockPWMPin), True)
            self.detail = "mock pins (simulate = true in config)"
        else:
            self._load_real()
        self._aliases: dict[str, str] = {}
        for alias, spec in (aliases or {}).items():
            self._aliases[alias] = self.canonical(spec)
        self.servos = declared_servos(servos or {}, self.resolve)
        """Each declared servo's calibration, by canonical pin name."""
        self._devices: dict[str, Device] = {}
        self._modes: dict[str, PinMode] = {}
        self._held: set[str] = set()
        self._events = EventHub()
        self._debounce = Debouncer()
        """Mock pins record a bounce time but do not apply it; real factories debounce in
        the kernel (lgpio) or their library, so this filter is for mock pins only."""
        self.connected = False

    def _use(self, factory: Any, simulated: bool) -> None:
        self.factory, self.simulated = factory, simulated
        self.error = ""
        name = "mock" if simulated else type(factory).__name__.removesuffix("Factory").lower()
        model = str(factory.board_info.model)
        self.info = {"pin_factory": name, "chip": describe_chip(factory), "model": model}
        self.detail = "mock pins (injected factory)" if simulated else f"{name}, Pi {model}"

    def _load_real(self) -> bool:
        try:
            loaded: LoadedFactory = load_pin_factory(self.factory_name)
        except BoardUnavailable as exc:
            self.error = self.detail = str(exc)
            self.info = {"pin_factory": self.factory_name, "chip": "", "model": ""}
            return False
        self.factory, self.simulated, self.error = loaded.factory, False, ""
        self._loaded = loaded
        self.info = {"pin_factory": loaded.name, "chip": loaded.chip, "model": loaded.model,
                     "revision": loaded.revision}
        self.detail = loaded.summary
        return True

    def subscribe(self, listener: BoardListener) -> Callable[[], None]:
        return self._events.subscribe(listener)

    @property
    def _names(self) -> Any:
        return self.factory.board_info if self.factory is not None else HEADER_NAMES

    def canonical(self, spec: str) -> str:
        """The GPIO name of ``spec`` (``17``, ``BOARD11``, ``J8:11`` -> ``GPIO17``); UnknownPin
        says once what ``spec`` is not, and how pins are named.

        >>> board = GpioBoard("gpio")
        >>> board.canonical("BOARD11")
        'GPIO17'
        >>> board.canonical("nosuchpin")
        Traceback (most recent call last):
        ...
        peripherals.exc.UnknownPin: 'nosuchpin' is not a GPIO pin name; use names like GPIO17, 17 or BOARD11
        >>> board.canonical("BOARD6")
        Traceback (most recent call last):
        ...
        peripherals.exc.UnknownPin: 'BOARD6' is not a GPIO pin (it is a GND pin); use names like GPIO17, 17 or BOARD11
        """
        spec = str(spec).strip()
        try:
            name: str = self._names.to_gpio(spec)
        except PinInvalidPin:
            found = [info.name for _, info in self._names.find_pin(spec)]
            what = f" (it is a {found[0]} pin)" if found else " name"
            raise UnknownPin(f"{spec!r} is not a GPIO pin{what}; use names like GPIO17, 17 or BOARD11") \
                from None
        return name

    def resolve(self, spec: str) -> str:
        spec = str(spec).strip()
        if spec in self._aliases:
            return self._aliases[spec]
        return self.canonical(spec)

    def aliases_of(self, pin: str) -> tuple[str, ...]:
        return tuple(a for a, p in self._aliases.items() if p == pin)

    def capabilities(self) -> list[PinInfo]:
        names = set()
        for header in self._names.headers.values():
            for info in header.pins.values():
                if info.name.startswith("GPIO"):
                    names.add(info.name)
        ordered = sorted(names, key=lambda n: int(n[4:]))
        return [PinInfo(n, ALL_MODES, self.aliases_of(n)) for n in ordered]

    async def connect(self) -> None:
        """Raises BoardUnavailable (cause and fix) while the real header cannot be driven;
        a running agent's supervisor calls this again, so fixing permissions brings it up."""
        if self.factory is None and not self._load_real():
            raise BoardUnavailable(self.error)
        self._events.bind(asyncio.get_running_loop())
        self.connected = True
        log.info("board_connected board=%s kind=gpio detail=%r", self.name, self.detail)

    def _down(self) -> BoardUnavailable:
        return BoardUnavailable(f"board {self.name} is down: {self.error or 'not connected'}")

    async def close(self) -> None:
        """Release claimed pins; pins held at a safe level by apply_safe_state stay driven
        until the process exits (what the line does then is up to the kernel's driver)."""
        for pin, device in list(self._devices.items()):
            if pin in self._held:
                continue
            try:
                device.close()
            except GPIOZeroError as exc:
                log.warning("pin_release_failed board=%s pin=%s error=%r", self.name, pin, exc)
            del self._devices[pin]
            self._modes.pop(pin, None)
        if self._loaded is not None:  # held lines stay driven until the process exits
            self._loaded.close(release_chip=not self._held)
            if not self._held:
                self._loaded = self.factory = None  # connect() loads it again
        self.connected = False

    async def setup_pin(self, pin: str, mode: PinMode, pull: Pull = Pull.UP, *,
                        initial: bool = False, bounce_ms: int = 0) -> None:
        pin = self.resolve(pin)
        if mode not in ALL_MODES:
            raise PinModeError(f"{pin}: the Pi header has no {mode.value} pins; "
                               "use an arduino or stm32 board for analog inputs")
        if self.factory is None:
            raise self._down()
        if self._modes.get(pin) == mode:
            return
        if pin in self._devices:
            self._devices.pop(pin).close()
        try:
            device = self._claim(pin, mode, Pull(pull), initial, bounce_ms)
        except GPIOZeroError as exc:
            raise BoardUnavailable(f"cannot claim {pin} as {mode.value} on {self.detail}: {exc}; "
                                   "is another program using the pin?") from exc
        self._devices[pin] = device
        self._modes[pin] = mode

    def _claim(self, pin: str, mode: PinMode, pull: Pull, initial: bool, bounce_ms: int) -> Device:
        if mode is PinMode.OUTPUT:
            return DigitalOutputDevice(pin, initial_value=initial, pin_factory=self.factory)
        if mode is PinMode.PWM and pin in self.servos:
            return self._servo_device(pin, self.servos[pin])
        if mode is PinMode.PWM:
            return PWMOutputDevice(pin, initial_value=1.0 if initial else 0.0,
                                   frequency=DEFAULT_PWM_FREQUENCY, pin_factory=self.factory)
        pull_up = {Pull.UP: True, Pull.DOWN: False, Pull.NONE: None}[pull]
        self._debounce.set(pin, bounce_ms if self.simulated else 0)
        device = DigitalInputDevice(
            pin, pull_up=pull_up, active_state=True if pull_up is None else None,
            bounce_time=bounce_ms / 1000 if bounce_ms else None, pin_factory=self.factory)
        # events carry the electrical level of the edge, as read() does: gpiozero's "active"
        # is a low line for a pulled-up input and a high one otherwise
        active_level = 0.0 if pull_up else 1.0
        device.when_activated = lambda: self._input_changed(pin, active_level)
        device.when_deactivated = lambda: self._input_changed(pin, 1.0 - active_level)
        return device

    def _servo_device(self, pin: str, servo: ServoOptions) -> AngularServo:
        """A declared servo, sending no pulse until it is given an angle."""
        low, high = servo.pulses(SERVO_PULSE_US)
        return AngularServo(pin, initial_angle=None, min_angle=servo.min_angle,
                            max_angle=servo.max_angle, min_pulse_width=low / 1e6,
                            max_pulse_width=high / 1e6, frame_width=servo.frame_us / 1e6,
                            pin_factory=self.factory)

    def _input_changed(self, pin: str, value: float) -> None:
        if self._debounce.accept(pin):
            self._events.emit(BoardEvent(self.name, "input", pin, value))

    def _device(self, pin: str, *modes: PinMode) -> Device:
        pin = self.resolve(pin)
        if pin not in self._devices:
            if self.factory is None:
                raise self._down()
            raise PinModeError(f"{pin} is not set up on board {self.name}")
        if modes and self._modes[pin] not in modes:
            wanted = " or ".join(m.value for m in modes)
            raise PinModeError(f"{pin} is set up as {self._modes[pin].value}, not {wanted}")
        return self._devices[pin]

    async def read(self, pin: str) -> float:
        """The electrical level (1 high, 0 low; PWM duty, a servo's too), not gpiozero's
        active-low value."""
        return float(_line(self._device(pin)).state)

    async def write(self, pin: str, value: bool) -> None:
        """A servo's pin takes off only, which is its safe state (:meth:`servo_safe`)."""
        device = self._device(pin, PinMode.OUTPUT, PinMode.PWM)
        if isinstance(device, AngularServo):
            if value:
                raise PinModeError(f"{self.resolve(pin)} drives a servo: give it an angle")
            self._servo_safe(self.resolve(pin), device)
        else:
            device.value = 1 if value else 0
        self._held.discard(self.resolve(pin))

    async def pwm(self, pin: str, duty: float, frequency: float | None = None) -> None:
        if not 0.0 <= duty <= 1.0:
            raise PinModeError(f"duty {duty} is outside 0..1")
        device = self._device(pin, PinMode.PWM)
        if isinstance(device, AngularServo):
            raise PinModeError(f"{self.resolve(pin)} drives a servo: give it an angle, not a duty")
        if frequency is not None:
            if frequency <= 0:
                raise PinModeError(f"frequency {frequency} must be positive")
            device.frequency = frequency
        device.value = duty
        self._held.discard(self.resolve(pin))

    async def servo(self, pin: str, angle: float) -> None:
        """Turn the servo declared on ``pin`` to ``angle`` degrees (within its range)."""
        name = self.resolve(pin)
        servo = self.servos.get(name)
        if servo is None:
            raise PinModeError(f"{name} is not declared as a servo on board {self.name}; add "
                               f"[boards.{self.name}.servos.{name}] (its angle range and pulse "
                               "widths; {} takes the defaults)")
        servo.check(name, angle)
        device = self._device(name, PinMode.PWM)
        assert isinstance(device, AngularServo)  # a declared servo's pwm pin is claimed as one
        device.angle = angle
        self._held.discard(name)

    def _servo_safe(self, pin: str, device: AngularServo) -> None:
        """The safe angle when one is configured, else no more pulses (the servo goes limp)."""
        safe = self.servos[pin].safe_angle
        if safe is None:
            device.detach()
        else:
            device.angle = safe

    async def simulate_input(self, pin: str, level: float) -> None:
        """Drive a mock input pin's line (the mock pins only: a real header refuses)."""
        if not self.simulated:
            await super().simulate_input(pin, level)
            return
        mock = self._device(pin, PinMode.INPUT).pin
        if level >= 0.5:
            mock.drive_high()
        else:
            mock.drive_low()

    async def apply_safe_state(self, values: dict[str, bool]) -> list[str]:
        failed = []
        for spec, level in values.items():
            try:
                pin = self.resolve(spec)
                device = self._device(pin, PinMode.OUTPUT, PinMode.PWM)
                if isinstance(device, AngularServo):
                    self._servo_safe(pin, device)
                    continue
                device.value = 1 if level else 0
            except (GPIOZeroError, PinModeError, UnknownPin, BoardUnavailable) as exc:
                log.error("safe_state_failed board=%s pin=%s error=%r", self.name, spec, exc)
                failed.append(spec)
                continue
            if level:  # a released line falls back to low or its pull: keep a high one driven
                self._held.add(pin)
        return failed

    def status(self) -> BoardStatus:
        pins = []
        for pin, device in self._devices.items():
            line = _line(device)
            freq = line.frequency if isinstance(device, PWMOutputDevice | AngularServo) else None
            pins.append(PinState(pin, self._modes[pin], float(line.state), freq))
        return BoardStatus(self.name, self.kind, self.connected, self.simulated, self.detail, pins,
                           info=dict(self.info))


def _line(device: Device) -> Any:
    """The gpiozero pin under ``device`` (a servo drives its own PWM device's)."""
    return device.pwm_device.pin if isinstance(device, AngularServo) else device.pin
