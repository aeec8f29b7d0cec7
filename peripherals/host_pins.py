"""What the Arduino and STM32 drivers share on the host side: the pins the host has set up (mode
and pull), the last level seen per pin, the event hub, and the safe-state walk over them."""

from __future__ import annotations

import logging
from collections.abc import Callable

from peripherals.base import Board, BoardEvent, BoardListener, BoardStatus, PinMode, PinState, Pull
from peripherals.events import Debouncer, EventHub
from peripherals.exc import BoardError, BoardUnavailable, PinModeError

log = logging.getLogger(__name__)


class HostPinTable(Board):
    """A mixin for boards behind a serial link; the board sets ``name``, ``kind``,
    ``connected``, ``detail`` and implements ``write``."""

    name: str
    kind: str
    connected: bool
    detail: str
    """What the link is doing, for status: the firmware and port when up, the cause when down."""
    holds_levels = True
    """The firmware keeps a level after the host's command exits."""

    def __init__(self) -> None:
        self._modes: dict[str, tuple[PinMode, Pull]] = {}
        self._values: dict[str, float | None] = {}
        self._events = EventHub()
        self._debounce = Debouncer()

    def _input_edge(self, pin: str, level: float) -> None:
        """Report an input change unless it is a bounce (the firmware reports every edge)."""
        if self._debounce.accept(pin):
            self._events.emit(BoardEvent(self.name, "input", pin, level))

    def _mode(self, pin: str, *allowed: PinMode) -> PinMode:
        if pin not in self._modes:
            raise PinModeError(f"{pin} is not set up on board {self.name}")
        mode = self._modes[pin][0]
        if allowed and mode not in allowed:
            wanted = " or ".join(m.value for m in allowed)
            raise PinModeError(f"{pin} is set up as {mode.value}, not {wanted}")
        return mode

    def _down(self) -> BoardUnavailable:
        return BoardUnavailable(f"board {self.name} is not connected ({self.detail}); a running "
                                "agent reconnects it when it is back")

    def subscribe(self, listener: BoardListener) -> Callable[[], None]:
        return self._events.subscribe(listener)

    async def apply_safe_state(self, values: dict[str, bool]) -> list[str]:
        failed = []
        for spec, level in values.items():
            try:
                await self.write(spec, level)
            except BoardError as exc:
                log.error("safe_state_failed board=%s pin=%s error=%r", self.name, spec, exc)
                failed.append(spec)
        return failed

    def status(self) -> BoardStatus:
        pins = [PinState(pin, mode, float(self._values.get(pin) or 0.0))
                for pin, (mode, _pull) in self._modes.items()]
        return BoardStatus(self.name, self.kind, self.connected, False, self.detail, pins)
