"""The Board protocol, the small value types shared by every board driver, and the spec a board
type registers (:class:`BoardSpec`: its type name, its options, how it is built).

A board is a set of named pins. Drivers resolve user-facing names (``GPIO17``, ``BOARD11``, an
alias such as ``led``) to one canonical name, claim pins in a :class:`PinMode`, and read or drive
them. Policy (which pins may be used, by whom) lives above this layer, in ``edge.security``.
"""

from __future__ import annotations

import enum
from abc import abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, TypeVar, runtime_checkable

from peripherals.exc import PinModeError
from peripherals.options import Options
from peripherals.registry import AdapterSpec
from peripherals.servo import ServoOptions


class PinMode(enum.StrEnum):
    INPUT = "input"
    OUTPUT = "output"
    PWM = "pwm"
    ANALOG = "analog"
    """An ADC input; reads return 0.0..1.0 of the reference voltage (microcontroller boards)."""


class Pull(enum.StrEnum):
    UP = "up"
    DOWN = "down"
    NONE = "none"


@dataclass(frozen=True)
class PinInfo:
    """One pin as the board reports it: canonical name and what the hardware can do."""

    name: str
    modes: frozenset[PinMode]
    aliases: tuple[str, ...] = ()


@dataclass
class PinState:
    """A claimed pin's current state. ``value`` is 0/1 for digital pins, 0.0..1.0 for PWM duty."""

    name: str
    mode: PinMode
    value: float
    frequency: float | None = None


@dataclass
class BoardStatus:
    name: str
    kind: str
    connected: bool
    simulated: bool
    detail: str = ""
    pins: list[PinState] = field(default_factory=list)
    info: dict[str, str] = field(default_factory=dict)
    """What drives the board, for status and doctor (the Pi header: pin_factory, chip, model)."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "connected": self.connected,
            "simulated": self.simulated,
            "detail": self.detail,
            **({"info": self.info} if self.info else {}),
            "pins": [
                {"pin": p.name, "mode": p.mode.value, "value": p.value, "frequency": p.frequency}
                for p in self.pins
            ],
        }


@dataclass(frozen=True)
class BoardEvent:
    """Something the board reported by itself.

    ``kind`` is ``input`` (a watched input changed; ``pin`` and ``value`` set), ``watchdog`` (the
    firmware drove its safe values because the host fell silent), ``down`` or ``up`` (the link
    was lost or re-established). The agent's hardware layer adds ``output`` for its own
    actuations (``value``: 1/0, a PWM duty or a servo angle); boards never send it."""

    board: str
    kind: str
    pin: str | None = None
    value: float | None = None


BoardListener = Callable[[BoardEvent], None]


@runtime_checkable
class Board(Protocol):
    """What every board driver provides. I/O methods are async: serial boards block.

    Drivers subclass this Protocol, so the optional capabilities below come with a default:
    no servo, no firmware-side safe state. A driver that can do more overrides them."""

    name: str
    kind: str
    connected: bool
    """False while the board is unreachable; calls on it fail fast and a running agent's
    :class:`~peripherals.supervisor.BoardSupervisor` calls :meth:`connect` again."""
    holds_levels: bool
    """Whether an output keeps its level after the process that set it exits (firmware on a
    microcontroller does; the kernel makes no such promise for the Pi's header)."""
    servo_pins: ClassVar[frozenset[str]] = frozenset()
    """The pins (canonical names) a hobby servo can run on: none unless the driver overrides
    :meth:`servo`. Its :class:`BoardSpec` says the same, so that a config is checked without
    importing the driver."""

    @abstractmethod
    def resolve(self, spec: str) -> str:
        """Canonical pin name for ``spec`` (a pin name or alias); raises UnknownPin."""
        ...

    @abstractmethod
    def canonical(self, spec: str) -> str:
        """Canonical pin name for ``spec`` as a pin name only (no aliases); raises UnknownPin."""
        ...

    @abstractmethod
    def capabilities(self) -> list[PinInfo]:
        """Every usable pin with the modes the hardware supports."""
        ...

    @abstractmethod
    async def connect(self) -> None:
        """Open the link (raises BoardUnavailable saying why it cannot)."""
        ...

    @abstractmethod
    async def close(self) -> None: ...

    @abstractmethod
    async def setup_pin(self, pin: str, mode: PinMode, pull: Pull = Pull.UP, *,
                        initial: bool = False, bounce_ms: int = 0) -> None:
        """Claim ``pin`` in ``mode``; outputs start at the line level ``initial`` (high when
        true), inputs ignore edges shorter than ``bounce_ms``."""
        ...

    async def adopt_pin(self, pin: str, mode: PinMode, pull: Pull = Pull.UP, *,
                        initial: bool = False, bounce_ms: int = 0) -> None:
        """Claim ``pin`` like :meth:`setup_pin`, except that an output the board already drives
        in ``mode`` keeps the level it has (``initial`` applies only to a pin that is not one
        yet). A one-shot command on a board that holds levels claims this way, so reading an
        output reports its real level and writing one does not pass through the safe level
        first. Default: plain :meth:`setup_pin` (a board that cannot tell what a pin is doing)."""
        await self.setup_pin(pin, mode, pull, initial=initial, bounce_ms=bounce_ms)

    @abstractmethod
    async def read(self, pin: str) -> float: ...

    @abstractmethod
    async def write(self, pin: str, value: bool) -> None: ...

    @abstractmethod
    async def pwm(self, pin: str, duty: float, frequency: float | None = None) -> None: ...

    async def servo(self, pin: str, angle: float) -> None:
        """Turn a hobby servo on ``pin`` (one of :attr:`servo_pins`) to ``angle`` degrees
        (0..180)."""
        raise PinModeError(f"board {self.name} ({self.kind}) cannot drive servos; an Arduino "
                           "can, on D9 and D10")

    @abstractmethod
    async def apply_safe_state(self, values: dict[str, bool]) -> list[str]:
        """Drive each claimed pin in ``values`` to its safe line level (True: high); must not
        raise for one bad pin. Returns the pins it could not set (each logged)."""
        ...

    async def declare_safe_state(self, values: dict[str, bool]) -> None:
        """Tell firmware with a watchdog the line levels to drive if the host falls silent.
        Boards without one have nothing to tell."""
        return None

    async def simulate_input(self, pin: str, level: float) -> None:
        """Set what a simulated input reads (1 a high line, 0 a low one; an analog pin's 0..1 of
        its reference), reported as the hardware would report it. A board that drives real
        hardware refuses: nothing can be pretended on a real line."""
        raise PinModeError(f"board {self.name} ({self.kind}) drives real hardware; set "
                           f"[boards.{self.name}] simulate = true (or `edge-cli run --simulate`) "
                           "to try inputs by hand")

    @abstractmethod
    def subscribe(self, listener: BoardListener) -> Callable[[], None]:
        """Call ``listener`` for every :class:`BoardEvent` (on the event loop the board was
        connected from); returns a function that unsubscribes it."""
        ...

    @abstractmethod
    def status(self) -> BoardStatus: ...


class BoardOptions(Options):
    """The keys of a ``[boards.NAME]`` section its driver reads; a board type's options subclass
    it. Every board resolves aliases; ``type`` and the allowlisted ``pins`` belong to the agent
    (``edge.config``), which adds them to the section."""

    aliases: dict[str, str] = {}
    """Alias -> the board's own name for a pin (``led = "GPIO17"``)."""
    pins: Mapping[str, object] = {}
    """The pins the agent may use, by the board's name for each: the agent's section fills it
    (``[boards.NAME.pins]``); a driver reads only the names."""
    servos: dict[str, ServoOptions] = {}
    """The pins (names or aliases) that drive hobby servos, each with its angle range, pulse
    widths and safe angle (``[boards.NAME.servos.GPIO18]``; ``{}`` takes the defaults). On the Pi
    header a servo runs only on a pin declared here; an Uno drives one on D9 or D10 either way."""
    simulate: bool = False
    """The board in memory, with its type's pins and capabilities, for trying a config before it
    is wired (mock pins on the Pi header, :mod:`peripherals.simulated_board` for the others)."""


@dataclass(frozen=True)
class BoardContext:
    """What a board is built with besides its section: gpiozero's pin factory, which tests
    swap for MockFactory (boards that do not use gpiozero ignore it)."""

    pin_factory: Any = None


@dataclass(frozen=True)
class DeviceNode:
    """A device node an adapter opens, for ``edge-cli doctor``: the path (a glob for a family
    of nodes), the group that is given access to it, and what to do when it does not exist."""

    path: str
    group: str
    missing: str


BoardOptionsT = TypeVar("BoardOptionsT", bound=BoardOptions)


def no_devices(options: Any) -> Sequence[DeviceNode]:
    """An adapter that opens no device node (a simulated board, a sysfs reader)."""
    return ()


@dataclass(frozen=True)
class BoardSpec(AdapterSpec[BoardOptionsT]):
    """One board type, registered under ``kind`` (the section's ``type``) in
    :data:`peripherals.factory.BOARDS`.

    ``build(name, options, context)`` makes the driver without opening it (``connect`` does);
    ``options`` is the validated section, an instance of ``options``. ``default_pins`` are the
    pins a section that lists none allowlists, as the config file writes them (``{"led":
    {"mode": "output", "safe": "off"}}``). ``devices(options)`` names the device nodes the board
    opens, for doctor's groups and devices checks. ``servo_pins`` are the pins a servo can
    run on, as the driver's :attr:`Board.servo_pins` names them (none: the board drives no
    servo); config checks ask the spec, so a servo on a pin that cannot drive one is refused
    before anything runs.

    Config validation imports every spec's module: keep it light, and import the driver's
    libraries where the driver is built (the built-in board types do, in
    :mod:`peripherals.board_types`)."""

    build: Callable[[str, BoardOptionsT, BoardContext], Board]
    default_pins: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    devices: Callable[[BoardOptionsT], Sequence[DeviceNode]] = no_devices
    servo_pins: frozenset[str] = frozenset()
    servos_declared: bool = False
    """True: a servo runs only on a pin the section declares in ``servos`` (the Pi header, where
    any line could carry one); config checks hold a servo anywhere else to be refused."""
    options_base: ClassVar[type[Options]] = BoardOptions
