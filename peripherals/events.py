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
