"""A board type written by following peripherals/README.md ("Adding a board type"), for tests
only: its pins are entries in a JSON file, so a level set by one process stays set after it
exits, as a microcontroller's firmware holds it, and a test can read it.

Its registration is the README's one line, in a copy of the tree (tests/peripherals/test_recipes.py):
``"ledger": "peripherals.ledger:SPEC"`` in :data:`peripherals.factory.BOARDS`.

>>> import asyncio, tempfile
>>> board = SPEC.build("bench", LedgerOptions(path=tempfile.mktemp(), aliases={"lamp": "L3"}),
...                    BoardContext())
>>> async def switch():
...     await board.connect()
...     await board.setup_pin("lamp", PinMode.OUTPUT)
...     await board.write("lamp", True)
...     return await board.read("L3")
>>> asyncio.run(switch())
1.0
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from pydantic import Field

from peripherals.base import (
    Board,
    BoardContext,
    BoardListener,
    BoardOptions,
    BoardSpec,
    BoardStatus,
    PinInfo,
    PinMode,
    PinState,
    Pull,
)
from peripherals.exc import BoardUnavailable, PinModeError, UnknownPin

MODES = frozenset({PinMode.INPUT, PinMode.OUTPUT, PinMode.PWM})


class LedgerOptions(BoardOptions):
    """A ledger of pin levels in a JSON file: pins L0, L1, ... up to ``size``."""

    path: str = Field(min_length=1)
    """The file that holds the levels (created on the first write)."""
    size: int = Field(default=8, ge=1, le=64)


class LedgerBoard(Board):
    kind = "ledger"
    holds_levels = True

    def __init__(self, name: str, path: str, size: int, aliases: dict[str, str]):
        self.name, self.path, self.size = name, Path(path), size
        self.connected = False
        self._modes: dict[str, PinMode] = {}
        self._aliases = {alias: self.canonical(pin) for alias, pin in aliases.items()}

    def canonical(self, spec: str) -> str:
        name = str(spec).strip().upper()
        if not (name[:1] == "L" and name[1:].isdigit() and int(name[1:]) < self.size):
            raise UnknownPin(f"{spec!r} is not a pin of ledger {self.name}: use L0..L{self.size - 1}")
        return f"L{int(name[1:])}"

    def resolve(self, spec: str) -> str:
        return self._aliases.get(str(spec).strip()) or self.canonical(spec)

    def capabilities(self) -> list[PinInfo]:
        return [PinInfo(f"L{n}", MODES, tuple(a for a, p in self._aliases.items() if p == f"L{n}"))
                for n in range(self.size)]

    async def connect(self) -> None:
        if not self.path.parent.is_dir():
            raise BoardUnavailable(f"no folder for {self.path}: create it")
        self.connected = True

    async def close(self) -> None:
        self.connected = False

    async def setup_pin(self, pin: str, mode: PinMode, pull: Pull = Pull.UP, *,
                        initial: bool = False, bounce_ms: int = 0) -> None:
        pin = self.resolve(pin)
        if mode not in MODES:
            raise PinModeError(f"{pin}: a ledger has no {mode.value} pins")
        self._modes[pin] = mode
        if mode is not PinMode.INPUT:
            self._store(pin, 1.0 if initial else 0.0)

    async def read(self, pin: str) -> float:
        return float(self._levels().get(self.resolve(pin), 0.0))

    async def write(self, pin: str, value: bool) -> None:
        self._store(self.resolve(pin), 1.0 if value else 0.0)

    async def pwm(self, pin: str, duty: float, frequency: float | None = None) -> None:
        self._store(self.resolve(pin), duty)

    async def apply_safe_state(self, values: dict[str, bool]) -> list[str]:
        for pin, level in values.items():
            await self.write(pin, level)
        return []

    def subscribe(self, listener: BoardListener) -> Callable[[], None]:
        return lambda: None  # a ledger's inputs never change by themselves

    def status(self) -> BoardStatus:
        levels = self._levels()
        pins = [PinState(pin, mode, levels.get(pin, 0.0)) for pin, mode in self._modes.items()]
        return BoardStatus(self.name, self.kind, self.connected, False, f"ledger {self.path}", pins)

    def _levels(self) -> dict[str, float]:
        return json.loads(self.path.read_text()) if self.path.exists() else {}

    def _store(self, pin: str, level: float) -> None:
        if not self.connected:
            raise BoardUnavailable(f"board {self.name} is not connected")
        self.path.write_text(json.dumps(self._levels() | {pin: level}))


def build(name: str, options: LedgerOptions, context: BoardContext) -> Board:
    return LedgerBoard(name, options.path, options.size, options.aliases)


SPEC = BoardSpec("ledger", LedgerOptions, build)
