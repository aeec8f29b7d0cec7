"""The sensor hub's listener that keeps every reading: off the path of rules and actuations.

The listener only appends to a bounded buffer in memory (a deque: a reading costs an append on
the event loop, never a disk write); the ``readings-writer`` task writes the buffer in one
transaction every :data:`FLUSH_SECONDS` on the store's worker thread, and ``readings-upkeep``
drops what is past each tier's span every :data:`UPKEEP_SECONDS`. Both are supervised tasks; a
write that fails puts its batch back (the buffer stays bounded: the oldest go first, counted in
``dropped``) and the writer starts again after a backoff. A failed read is kept too (no value):
the history shows a gap where the sensor was failing. Stopping writes what is buffered, so a
crash loses at most the last few seconds of readings, a clean stop none.

>>> import asyncio, tempfile, pathlib
>>> from peripherals.sensors.base import Reading
>>> from edge.sensors import SensorHub
>>> async def demo():
...     store = ReadingStore.in_state_dir(pathlib.Path(tempfile.mkdtemp()), clock=lambda: 60.0)
...     recorder = ReadingRecorder(store, SensorHub([], clock=lambda: 30.0))
...     recorder.reading("shed", Reading("temperature", 21.5, "°C"))
...     await recorder.aclose()  # writes what is buffered
...     reopened = ReadingStore(store.path, read_only=True, clock=lambda: 60.0)
...     [series] = await reopened.series("shed", "temperature", 0.0, 60.0)
...     await reopened.close()
...     return [(b.start, b.mean) for b in series.buckets]
>>> asyncio.run(demo())
[(30.0, 21.5)]
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from edge.automation.clock import Clock, SystemClock
from edge.core.storage import StorageHealth
from edge.core.supervision import SupervisedTask, close_all
from edge.readings.store import Entry, ReadingStore

if TYPE_CHECKING:
    from collections.abc import Callable

    from edge.sensors import SensorHub
    from peripherals.sensors.base import Reading

log = logging.getLogger(__name__)

FLUSH_SECONDS = 5.0
UPKEEP_SECONDS = 600.0
BUFFER_LIMIT = 50_000
"""Readings held while the file cannot be written (a full disk): the newest are kept."""


class ReadingRecorder:
    def __init__(self, store: ReadingStore, hub: SensorHub, *, clock: Clock | None = None,
                 flush_seconds: float = FLUSH_SECONDS, upkeep_seconds: float = UPKEEP_SECONDS,
                 buffer_limit: int = BUFFER_LIMIT, health: StorageHealth | None = None):
        """``clock`` paces the writer and the upkeep (tests give a ManualClock); a reading's
        time is the hub's clock when it arrives."""
        self.store, self.hub = store, hub
        self.clock = clock or SystemClock()
        self.flush_seconds, self.upkeep_seconds = flush_seconds, upkeep_seconds
        self.health = health or StorageHealth()
        """Told when the disk refuses a write (full, read-only) and when it takes one again."""
        self._buffer: deque[Entry] = deque(maxlen=buffer_limit)
        self.dropped = 0
        """Readings the buffer let go while the file could not be written."""
        self.written = 0
        self._tasks: list[SupervisedTask] = []
        self._unsubscribe: list[Callable[[], None]] = []
        self._flushing = asyncio.Lock()

    # the listeners: on the event loop, an append each ---------------------------------------

    def listen(self) -> None:
        """Hear every reading and every failed read of the hub's sensors."""
        self._unsubscribe += [self.hub.subscribe(self.reading),
                              self.hub.subscribe_failures(self.failure)]

    def reading(self, sensor: str, reading: Reading) -> None:
        self._append(Entry(sensor, reading.quantity, reading.unit, self.hub.clock(),
                           float(reading.value)))

    def failure(self, sensor: str, error: str) -> None:
        state = self.hub.sensors.get(sensor)
        units = state.source.present if state is not None else {}
        now = self.hub.clock()
        for quantity, unit in units.items():
            self._append(Entry(sensor, quantity, unit, now, None))

    def _append(self, entry: Entry) -> None:
        if len(self._buffer) == self._buffer.maxlen:
            self.dropped += 1
            if self.dropped == 1:
                log.warning("readings_buffer_full limit=%d (the oldest are dropped until the "
                            "history can be written)", self._buffer.maxlen)
        self._buffer.append(entry)

    @property
    def pending(self) -> int:
        return len(self._buffer)

    @property
    def flushing(self) -> bool:
        """A write is under way."""
        return self._flushing.locked()

    # writing ---------------------------------------------------------------------------------

    async def flush(self) -> int:
        """Write what is buffered (one transaction); how many readings. A failure puts them
        back, ahead of what arrived meanwhile, and raises."""
        async with self._flushing:
            batch = list(self._buffer)
            self._buffer.clear()
            if not batch:
                return 0
            try:
                await self.store.write(batch)
            except BaseException as exc:
                self.health.failed(exc, self.store.path)
                arrived = list(self._buffer)
                self._buffer.clear()
                for entry in (*batch, *arrived)[-(self._buffer.maxlen or 1):]:
                    self._buffer.append(entry)
                raise
            self.written += len(batch)
            self.health.recovered(self.store.path)
            return len(batch)

    async def flush_for_reading(self) -> None:
        """Write what is buffered before the history is read; a failure is logged (the
        writer's loop retries), and the reader gets what the file has."""
        try:
            await self.flush()
        except Exception as exc:
            log.warning("readings_write_failed pending=%d error=%r", len(self._buffer), str(exc))

    async def _every(self, seconds: float, work: Callable[[], Any]) -> None:
        while True:
            await self.clock.sleep_until(self.clock.now() + timedelta(seconds=seconds))
            await work()

    async def write_loop(self) -> None:
        await self._every(self.flush_seconds, self.flush)

    async def upkeep_loop(self) -> None:
        await self.store.maintain()  # at start: an agent that was off for a week prunes first
        await self._every(self.upkeep_seconds, self.store.maintain)

    # running ---------------------------------------------------------------------------------

    def start(self) -> None:
        self.listen()
        self._tasks += [SupervisedTask("readings-writer", self.write_loop).start(),
                        SupervisedTask("readings-upkeep", self.upkeep_loop).start()]

    def supervised_tasks(self) -> list[SupervisedTask]:
        return list(self._tasks)

    async def aclose(self) -> None:
        """Stop listening and the loops, write what is buffered, close the file."""
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe.clear()
        await close_all(self._tasks)
        self._tasks.clear()
        try:
            await self.flush()
        except Exception as exc:
            log.error("readings_lost count=%d error=%r", len(self._buffer), str(exc))
        await self.store.close()

    def status(self) -> dict[str, Any]:
        """For ``edge-cli status --json``: the file and its size (a stat, no query), readings
        written since start, waiting in the buffer, and dropped while it could not be written."""
        size = 0
        for path in (self.store.path, self.store.path.with_name(self.store.path.name + "-wal")):
            with contextlib.suppress(OSError):
                size += path.stat().st_size
        return {"file": str(self.store.path), "bytes": size, "written": self.written,
                "pending": self.pending, "dropped": self.dropped}

