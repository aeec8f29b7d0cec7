"""Delivering board events to listeners on the event loop, whichever thread saw them.

>>> hub = EventHub()
>>> seen = []
>>> unsubscribe = hub.subscribe(seen.append)
>>> hub.emit(BoardEvent("uno", "input", "D2", 1.0))  # no loop bound: delivered directly
>>> seen[0].pin, unsubscribe() is None
('D2', True)
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from peripherals.base import BoardEvent, BoardListener

log = logging.getLogger(__name__)


class EventHub:
    def __init__(self) -> None:
        self._listeners: list[BoardListener] = []
        self._loop: asyncio.AbstractEventLoop | None = None

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        """Deliver on ``loop`` from now on (boards call this in ``connect``)."""
        self._loop = loop

    def subscribe(self, listener: BoardListener) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def emit(self, event: BoardEvent) -> None:
        loop = self._loop
        if loop is None or loop.is_closed():
            self._deliver(event)
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            self._deliver(event)
        else:
            loop.call_soon_threadsafe(self._deliver, event)

    def _deliver(self, event: BoardEvent) -> None:
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception:  # one bad listener must not silence the others
                log.exception("board_listener_failed board=%s kind=%s", event.board, event.kind)


class Debouncer:
    """Host-side debounce for boards whose hardware reports every edge (firmware, mock pins):
    an edge within ``bounce_ms`` of the last one let through on that pin is dropped. The Pi
    header on a real pin factory debounces in the kernel instead.

    >>> d = Debouncer(); d.set("D2", 50)
    >>> d.accept("D2"), d.accept("D2"), d.accept("D3")
    (True, False, True)
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._window: dict[str, float] = {}
        self._last: dict[str, float] = {}
        self._clock = clock

    def set(self, pin: str, bounce_ms: int) -> None:
        if bounce_ms:
            self._window[pin] = bounce_ms / 1000
        else:
            self._window.pop(pin, None)
        self._last.pop(pin, None)

    def accept(self, pin: str) -> bool:
        window = self._window.get(pin)
        if window is None:
            return True
        now = self._clock()
        if pin in self._last and now - self._last[pin] < window:
            return False
        self._last[pin] = now
        return True
