"""The clock schedules run on: wall time (aware UTC) to decide what is due, monotonic time to tell
a clock step from time really passing, and a sleep until a wall time.

:class:`SystemClock` is the real one. :class:`ManualClock` is a real object for tests: time moves
only when the test moves it, instantly, waking the sleepers in order, so a test of a day of cron
runs in milliseconds; :meth:`ManualClock.step` moves the wall clock alone, the way NTP steps it.

>>> import asyncio
>>> async def demo():
...     clock = ManualClock(datetime(2026, 3, 1, 6, 0, tzinfo=UTC))
...     woke = []
...     async def sleeper():
...         await clock.sleep_until(clock.now() + timedelta(minutes=5))
...         woke.append(clock.now().strftime("%H:%M"))
...     task = asyncio.create_task(sleeper())
...     await clock.advance(timedelta(hours=1))
...     await task
...     return woke, clock.now().strftime("%H:%M")
>>> asyncio.run(demo())
(['06:05'], '07:00')
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime:
        """Wall time, aware, in UTC."""
        ...

    def monotonic(self) -> float:
        """Seconds that only ever grow, whatever the wall clock does."""
        ...

    async def sleep_until(self, when: datetime) -> None:
        """Return once ``when`` (wall time) has come; at once if it has. A wall-clock step during
        the sleep is not seen: callers that must notice one sleep in chunks of
        :attr:`step_check`."""
        ...

    @property
    def step_check(self) -> timedelta:
        """The longest a sleeper that must notice a wall-clock step sleeps at a time."""
        ...


STEP_CHECK = timedelta(seconds=30)
"""How soon a wall-clock step (NTP after boot) is noticed by those that sleep in chunks."""


class SystemClock:
    step_check = STEP_CHECK

    def now(self) -> datetime:
        return datetime.now(UTC)

    def monotonic(self) -> float:
        return time.monotonic()

    async def sleep_until(self, when: datetime) -> None:
        await asyncio.sleep(max(0.0, (when - self.now()).total_seconds()))


def sleeper(clock: Clock) -> Callable[[float], Awaitable[None]]:
    """A sleep of so many seconds on ``clock`` (a ``for 90s`` hold, a ``max_on_seconds``
    timer): real time on the system clock, the test's or scenario's moves on a manual one."""
    if isinstance(clock, SystemClock):
        return asyncio.sleep

    async def sleep(seconds: float) -> None:
        await clock.sleep_until(clock.now() + timedelta(seconds=seconds))

    return sleep


SETTLE_ROUNDS = 30
"""Loop turns given to woken tasks (and the tasks they start) before time moves on."""


class ManualClock:
    """A clock that moves only when told to; sleepers wake in deadline order as it does."""

    step_check = STEP_CHECK
    """:meth:`step` moves the wall clock as NTP would: it is noticed as soon."""

    def __init__(self, start: datetime) -> None:
        if start.tzinfo is None:
            raise ValueError("ManualClock needs an aware start time")
        self._wall = start.astimezone(UTC)
        self._mono = 1000.0
        self._sleepers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._order = itertools.count()

    def now(self) -> datetime:
        return self._wall

    def monotonic(self) -> float:
        return self._mono

    async def sleep_until(self, when: datetime) -> None:
        delay = (when - self._wall).total_seconds()
        if delay <= 0:
            await asyncio.sleep(0)
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._sleepers, (self._mono + delay, next(self._order), future))
        await future

    @property
    def sleepers(self) -> int:
        return sum(1 for *_, future in self._sleepers if not future.done())

    async def advance(self, delta: timedelta) -> None:
        """Let ``delta`` pass: wall and monotonic time move together, each sleeper wakes at its
        deadline and the loop settles before time moves on."""
        end = self._mono + delta.total_seconds()
        await self.settle()
        while self._sleepers and self._sleepers[0][0] <= end:
            deadline, _, future = heapq.heappop(self._sleepers)
            if future.done():
                continue
            self._move(deadline - self._mono)
            future.set_result(None)
            await self.settle()
        self._move(end - self._mono)
        await self.settle()

    async def advance_to(self, when: datetime) -> None:
        await self.advance(when - self._wall)

    def step(self, delta: timedelta) -> None:
        """Step the wall clock (an NTP correction) without time passing; sleepers keep their
        monotonic deadlines, as asyncio's timers do."""
        self._wall += delta

    async def settle(self) -> None:
        for _ in range(SETTLE_ROUNDS):
            await asyncio.sleep(0)

    def _move(self, seconds: float) -> None:
        if seconds > 0:
            self._mono += seconds
            self._wall += timedelta(seconds=seconds)
