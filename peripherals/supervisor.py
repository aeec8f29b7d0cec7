"""Reconnecting boards that went away.

A board reports itself down the moment its link breaks (its ``connected`` turns false and calls
fail fast). The supervisor polls every ``interval`` seconds and calls ``connect()`` again; a
driver's ``connect`` re-applies its pin modes, levels and safe values, and ``on_up`` lets the
owner redo anything else (claiming pins that were never set up). A board named in ``held`` is
left alone (lent out: being flashed) until its name leaves that collection.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Collection

from peripherals.base import Board
from peripherals.exc import BoardError

log = logging.getLogger(__name__)

RECONNECT_INTERVAL = 0.5


class BoardSupervisor:
    def __init__(self, boards: dict[str, Board], on_up: Callable[[str], Awaitable[None]],
                 interval: float = RECONNECT_INTERVAL, held: Collection[str] = ()):
        self.boards = boards
        self.held = held
        self.on_up = on_up
        self.interval = interval
        self._failures: dict[str, str] = {}

    async def run(self) -> None:
        while True:
            for name, board in self.boards.items():
                if not board.connected and name not in self.held:
                    await self._try(name, board)
            await asyncio.sleep(self.interval)

    async def _try(self, name: str, board: Board) -> None:
        try:
            await board.connect()
        except BoardError as exc:
            if self._failures.get(name) != str(exc):  # log each new reason once, not every poll
                log.warning("board_reconnect_failed board=%s error=%r", name, str(exc))
            self._failures[name] = str(exc)
            return
        self._failures.pop(name, None)
        log.info("board_reconnected board=%s", name)
        try:
            await self.on_up(name)
        except BoardError as exc:
            log.error("board_restore_failed board=%s error=%r", name, exc)
