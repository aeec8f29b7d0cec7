"""A microcontroller board in memory: what ``simulate = true`` builds for an Arduino, an STM32 or a
fleet node, so a config written for the real plant runs on a laptop. It keeps the real board's
pin names and capabilities (the Uno's digital, PWM, servo and analog pins; an STM32's ports; a
node's allowlisted pins), holds every level it is given, and reports an input that
:meth:`SimulatedBoard.simulate_input` changes as the real board reports an edge.

>>> from peripherals.uno_layout import uno_pin_name
>>> uno = SimulatedBoard("uno", "arduino", UNO_LAYOUT, uno_pin_name, servo={"D9", "D10"})
>>> import asyncio
>>> async def press():
...     await uno.connect()
...     await uno.setup_pin("D2", PinMode.INPUT)
...     await uno.simulate_input("D2", 1)
...     return await uno.read("D2")
>>> asyncio.run(press())
1.0
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping

from peripherals.base import (
    Board,
    BoardEvent,
    BoardListener,
    BoardStatus,
    PinInfo,
    PinMode,
    PinState,
    Pull,
)
from peripherals.events import EventHub
from peripherals.exc import PinModeError, UnknownPin
from peripherals.servo import ServoOptions, declared_servos
from peripherals.uno_layout import PWM_PINS

DIGITAL = frozenset({PinMode.INPUT, PinMode.OUTPUT})
UNO_LAYOUT: dict[str, frozenset[PinMode]] = {
    **{f"D{n}": DIGITAL | ({PinMode.PWM} if n in PWM_PINS else set()) for n in range(2, 14)},
    **{f"A{n}": frozenset({PinMode.ANALOG}) for n in range(6)}}
"""The Uno's pins as its driver reports them (D0/D1 carry the serial link)."""

_STM32_ADC = {"PA0", "PA1", "PA4", "PB0", "PC1", "PC0"}
_STM32_PWM = {"PA5", "PA6", "PA7", "PA8", "PA9", "PA10", "PB6", "PB7", "PB8", "PB9"}
STM32_LAYOUT: dict[str, frozenset[PinMode]] = {
    f"P{port}{n}": DIGITAL | ({PinMode.PWM} if f"P{port}{n}" in _STM32_PWM else set())
    | ({PinMode.ANALOG} if f"P{port}{n}" in _STM32_ADC else set())
    for port in "ABC" for n in range(16) if f"P{port}{n}" not in ("PA2", "PA3", "PA13", "PA14")}
"""A NUCLEO-F401RE as our firmware reports it (PA2/PA3 are the link, PA13/PA14 the debugger)."""
NODE_MODES = DIGITAL | {PinMode.PWM}


def stm32_canonical(spec: str) -> str:
    text = str(spec).strip().upper()
    if text not in STM32_LAYOUT:
        raise UnknownPin(f"{spec!r} is not a pin of the simulated STM32 (PA0..PC15, without "
                         "PA2/PA3, the link, and PA13/PA14, the debugger)")
    return text


class SimulatedBoard(Board):
    """A board of ``kind`` whose pins are ``layout`` (name -> modes); ``canonical`` names pins
    the way the real driver does. Levels are electrical (1 high), as on every board."""

    holds_levels = True
    """It lives as long as the agent that built it: what it was told, it keeps."""

    def __init__(self, name: str, kind: str, layout: Mapping[str, frozenset[PinMode]],
                 canonical: Callable[[str], str], *, aliases: Mapping[str, str] | None = None,
                 servo: Iterable[str] = (), servos: Mapping[str, ServoOptions] | None = None):
        self.name, self.kind = name, kind
        self._layout = dict(layout)
        self._canonical = canonical
        self._servo = frozenset(servo)
        self._aliases = {alias: self.canonical(target) for alias, target in (aliases or {}).items()}
        self._calibration = declared_servos(servos or {}, self.resolve)
        self._modes: dict[str, PinMode] = {}
        self._values: dict[str, float] = {}
        self._events = EventHub()
        self.connected = False

    def resolve(self, spec: str) -> str:
        spec = str(spec).strip()
        return self._aliases.get(spec) or self.canonical(spec)

    def canonical(self, spec: str) -> str:
        pin = self._canonical(spec)
        if pin not in self._layout:
            raise UnknownPin(f"{spec!r} is not a pin of board {self.name}")
        return pin

    def capabilities(self) -> list[PinInfo]:
        return [PinInfo(pin, modes, tuple(a for a, p in self._aliases.items() if p == pin))
                for pin, modes in self._layout.items()]

    async def connect(self) -> None:
        self._events.bind(asyncio.get_running_loop())
        self.connected = True

    async def close(self) -> None:
        self.connected = False

    async def setup_pin(self, pin: str, mode: PinMode, pull: Pull = Pull.UP, *,
                        initial: bool = False, bounce_ms: int = 0) -> None:
        pin = self.resolve(pin)
        if mode not in self._layout[pin]:
            raise PinModeError(f"{pin} on board {self.name} cannot be {mode.value}")
        if self._modes.get(pin) != mode:
            self._modes[pin] = mode
            idle_high = pull is Pull.UP and self.kind != "node"  # a node reports meanings
            idle = float(idle_high) if mode is PinMode.INPUT else float(initial)
            self._values[pin] = 0.0 if mode is PinMode.ANALOG else idle

    def _claimed(self, pin: str, *modes: PinMode) -> str:
        pin = self.resolve(pin)
        if pin not in self._modes:
            raise PinModeError(f"{pin} is not set up on board {self.name}")
        if modes and self._modes[pin] not in modes:
            wanted = " or ".join(m.value for m in modes)
            raise PinModeError(f"{pin} is set up as {self._modes[pin].value}, not {wanted}")
        return pin

    async def read(self, pin: str) -> float:
        return self._values[self._claimed(pin)]

    async def write(self, pin: str, value: bool) -> None:
        self._values[self._claimed(pin, PinMode.OUTPUT, PinMode.PWM)] = float(value)

    async def pwm(self, pin: str, duty: float, frequency: float | None = None) -> None:
        if not 0.0 <= duty <= 1.0:
            raise PinModeError(f"duty {duty} is outside 0..1")
        self._values[self._claimed(pin, PinMode.PWM)] = duty

    async def servo(self, pin: str, angle: float) -> None:
        name = self._claimed(pin, PinMode.PWM, PinMode.OUTPUT)
        if name not in self._servo:
            await super().servo(pin, angle)
        servo = self._calibration.get(name, ServoOptions())
        servo.check(name, angle)
        self._values[name] = servo.fraction(angle)

    async def simulate_input(self, pin: str, level: float) -> None:
        name = self._claimed(pin, PinMode.INPUT, PinMode.ANALOG)
        if self._values.get(name) != level:
            self._values[name] = float(level)
            if self._modes[name] is PinMode.INPUT:
                self._events.emit(BoardEvent(self.name, "input", name, float(level)))

    async def apply_safe_state(self, values: dict[str, bool]) -> list[str]:
        failed = []
        for spec, level in values.items():
            try:
                await self.write(spec, level)
            except (PinModeError, UnknownPin):
                failed.append(spec)
        return failed

    def subscribe(self, listener: BoardListener) -> Callable[[], None]:
        return self._events.subscribe(listener)

    def status(self) -> BoardStatus:
        pins = [PinState(pin, mode, self._values.get(pin, 0.0)) for pin, mode in self._modes.items()]
        return BoardStatus(self.name, self.kind, self.connected, True,
                           f"simulated {self.kind} (simulate = true in config)", pins)
