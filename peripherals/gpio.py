"""The Raspberry Pi header as a board, through gpiozero.

Pins are named the gpiozero way (``GPIO17``, ``17``, ``BCM17``, ``BOARD11``, ``J8:11``) and by
aliases. With ``simulate=True``, or when no Pi pin factory can be loaded (not a Pi, no lgpio), the
board runs on gpiozero's :class:`~gpiozero.pins.mock.MockFactory` with PWM-capable pins and says so
in :meth:`GpioBoard.status`.

>>> board = GpioBoard("gpio", simulate=True, aliases={"led": "GPIO17"})
>>> board.resolve("BOARD11"), board.resolve("led")
('GPIO17', 'GPIO17')
"""

from __future__ import annotations

import asyncio
import logging
import warnings

from gpiozero import DigitalInputDevice, DigitalOutputDevice, PWMOutputDevice
from gpiozero.devices import Device
from gpiozero.exc import BadPinFactory, GPIOZeroError, PinInvalidPin
from gpiozero.pins.mock import MockFactory, MockPWMPin

from peripherals.base import BoardEvent, BoardStatus, PinInfo, PinMode, PinState, Pull
from peripherals.events import EventHub
from peripherals.exc import BoardUnavailable, PinModeError, UnknownPin

log = logging.getLogger(__name__)

ALL_MODES = frozenset({PinMode.INPUT, PinMode.OUTPUT, PinMode.PWM})  # the Pi has no ADC
DEFAULT_PWM_FREQUENCY = 100.0


def _load_pin_factory(simulate: bool):
    """Return ``(factory, simulated, detail)``; falls back to the mock factory off a Pi."""
    if simulate:
        return MockFactory(pin_class=MockPWMPin), True, "mock pins (simulate = true in config)"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            factory = Device._default_pin_factory()
    except BadPinFactory:
        detail = "mock pins: no Pi pin factory available (not a Pi, or lgpio missing)"
        return MockFactory(pin_class=MockPWMPin), True, detail
    return factory, False, f"hardware ({type(factory).__name__})"


class GpioBoard:
    """The Pi's 40-pin header. ``pin_factory`` may be given to share a factory (tests)."""

    kind = "gpio"

    def __init__(
        self,
        name: str = "gpio",
        *,
        simulate: bool = True,
        aliases: dict[str, str] | None = None,
        pin_factory=None,
    ):
        self.name = name
        if pin_factory is not None:
            self.factory, self.simulated = pin_factory, isinstance(pin_factory, MockFactory)
            self.detail = "mock pins (injected factory)" if self.simulated else "hardware"
        else:
            self.factory, self.simulated, self.detail = _load_pin_factory(simulate)
        self._aliases: dict[str, str] = {}
        for alias, spec in (aliases or {}).items():
            self._aliases[alias] = self._canonical(spec)
        self._devices: dict[str, Device] = {}
        self._modes: dict[str, PinMode] = {}
        self._held: set[str] = set()
        self._events = EventHub()
        self.connected = False

    def subscribe(self, listener):
        """Input changes as BoardEvents (see :class:`peripherals.base.EventSource`)."""
        return self._events.subscribe(listener)

    def _canonical(self, spec: str) -> str:
        try:
            return self.factory.board_info.to_gpio(str(spec).strip())
        except PinInvalidPin as exc:
            raise UnknownPin(f"{spec!r} is not a GPIO pin on this board ({exc}); "
                             "use names like GPIO17, 17 or BOARD11") from None

    def resolve(self, spec: str) -> str:
        spec = str(spec).strip()
        if spec in self._aliases:
            return self._aliases[spec]
        return self._canonical(spec)

    def aliases_of(self, pin: str) -> tuple[str, ...]:
        return tuple(a for a, p in self._aliases.items() if p == pin)

    def capabilities(self) -> list[PinInfo]:
        names = set()
        for header in self.factory.board_info.headers.values():
            for info in header.pins.values():
                if info.name.startswith("GPIO"):
                    names.add(info.name)
        ordered = sorted(names, key=lambda n: int(n[4:]))
        return [PinInfo(n, ALL_MODES, self.aliases_of(n)) for n in ordered]

    async def connect(self) -> None:
        self._events.bind(asyncio.get_running_loop())
        self.connected = True
        log.info("board_connected board=%s kind=gpio detail=%r", self.name, self.detail)

    async def close(self) -> None:
        """Release claimed pins; pins held at a safe level by apply_safe_state stay driven."""
        for pin, device in list(self._devices.items()):
            if pin in self._held:
                continue
            try:
                device.close()
            except GPIOZeroError as exc:
                log.warning("pin_release_failed board=%s pin=%s error=%r", self.name, pin, exc)
            del self._devices[pin]
            self._modes.pop(pin, None)
        self.connected = False

    async def setup_pin(self, pin: str, mode: PinMode, pull: Pull = Pull.UP) -> None:
        pin = self.resolve(pin)
        if mode not in ALL_MODES:
            raise PinModeError(f"{pin}: the Pi header has no {mode.value} pins; "
                               "use an arduino or stm32 board for analog inputs")
        if self._modes.get(pin) == mode:
            return
        if pin in self._devices:
            self._devices.pop(pin).close()
        try:
            if mode is PinMode.INPUT:
                pull_up = {Pull.UP: True, Pull.DOWN: False, Pull.NONE: None}[Pull(pull)]
                device = DigitalInputDevice(
                    pin, pull_up=pull_up, active_state=True if pull_up is None else None,
                    pin_factory=self.factory)
                # events carry the electrical level, as read() does (a pulled-up button reads 0)
                device.when_activated = device.when_deactivated = (
                    lambda: self._input_changed(pin, float(device.pin.state)))
            elif mode is PinMode.OUTPUT:
                device = DigitalOutputDevice(pin, initial_value=False, pin_factory=self.factory)
            else:
                device = PWMOutputDevice(pin, initial_value=0, frequency=DEFAULT_PWM_FREQUENCY,
                                         pin_factory=self.factory)
        except GPIOZeroError as exc:
            raise BoardUnavailable(f"cannot claim {pin} as {mode.value}: {exc}") from exc
        self._devices[pin] = device
        self._modes[pin] = mode

    def _input_changed(self, pin: str, value: float) -> None:
        self._events.emit(BoardEvent(self.name, "input", pin, value))

    def _device(self, pin: str, *modes: PinMode) -> Device:
        pin = self.resolve(pin)
        if pin not in self._devices:
            raise PinModeError(f"{pin} is not set up on board {self.name}")
        if modes and self._modes[pin] not in modes:
            wanted = " or ".join(m.value for m in modes)
            raise PinModeError(f"{pin} is set up as {self._modes[pin].value}, not {wanted}")
        return self._devices[pin]

    async def read(self, pin: str) -> float:
        """The electrical level (1 high, 0 low; PWM duty), not gpiozero's active-low value."""
        return float(self._device(pin).pin.state)

    async def write(self, pin: str, value: bool) -> None:
        device = self._device(pin, PinMode.OUTPUT, PinMode.PWM)
        device.value = 1 if value else 0
        self._held.discard(self.resolve(pin))

    async def pwm(self, pin: str, duty: float, frequency: float | None = None) -> None:
        if not 0.0 <= duty <= 1.0:
            raise PinModeError(f"duty {duty} is outside 0..1")
        device = self._device(pin, PinMode.PWM)
        if frequency is not None:
            if frequency <= 0:
                raise PinModeError(f"frequency {frequency} must be positive")
            device.frequency = frequency
        device.value = duty

    async def apply_safe_state(self, values: dict[str, bool]) -> None:
        for spec, level in values.items():
            try:
                pin = self.resolve(spec)
                self._device(pin, PinMode.OUTPUT, PinMode.PWM).value = 1 if level else 0
            except (GPIOZeroError, PinModeError, UnknownPin) as exc:
                log.error("safe_state_failed board=%s pin=%s error=%r", self.name, spec, exc)
                continue
            if level:
                self._held.add(pin)
            log.info("safe_state board=%s pin=%s value=%s", self.name, pin, "on" if level else "off")

    def status(self) -> BoardStatus:
        pins = []
        for pin, device in self._devices.items():
            freq = getattr(device, "frequency", None) if self._modes[pin] is PinMode.PWM else None
            pins.append(PinState(pin, self._modes[pin], float(device.pin.state), freq))
        return BoardStatus(self.name, self.kind, self.connected, self.simulated, self.detail, pins)
