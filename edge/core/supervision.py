"""The agent's long-lived loops, supervised: the scheduler, the rules, each sensor's polling, the
heartbeat, the MQTT bridge, the board supervisor, the dispatcher and memory upkeep each run in a
:class:`SupervisedTask`, and each channel's listener in its subclass
:class:`~edge.channels.supervisor.ListenerSupervisor`.

A loop that ends by an exception is logged with its traceback (``task_failed task=scheduler
error='RuntimeError: ...' restart_in=1s``) and started again after a backoff that doubles up to
a cap, and starts over from the first step once the loop has run fine for longer than the cap.
Until it runs again it is down: ``down_since`` and ``last_error`` say since when and why, in
``edge-cli status`` (``tasks``) and in the heartbeat's notices (``task scheduler is down``). A
loop that returns has finished its work (a terminal at the end of its input) and is not started
again. Cancelling (the agent stopping) ends it cleanly; a CancelledError the loop raises while
nobody cancelled it is a failure like any other.

>>> async def demo():
...     runs = []
...     async def flaky() -> None:
...         runs.append(len(runs))
...         if len(runs) == 1:
...             raise RuntimeError("lost the bus")
...     task = SupervisedTask("demo", flaky, backoff_start=0.01)
...     await task.supervise()  # returns when flaky returns (start() runs it in a task)
...     return len(runs), task.restarts, task.last_error, task.ended
>>> asyncio.run(demo())
(2, 1, 'RuntimeError: lost the bus', True)
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

log = logging.getLogger(__name__)

BACKOFF_START_SECONDS = 1.0
BACKOFF_MAX_SECONDS = 60.0

Work = Callable[[], Awaitable[None]]
"""What a supervised task runs, called afresh at each start: ``scheduler.run``."""


def _iso(moment: float | None) -> str | None:
    return None if moment is None else time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(moment))


def _stopping() -> bool:
    """Whether the task running this is being cancelled (rather than a CancelledError escaping
    from something the loop awaited)."""
    task = asyncio.current_task()
    return task is None or task.cancelling() > 0


class SupervisedTask:
    def __init__(self, name: str, work: Work, *, backoff_start: float | None = None,
                 backoff_max: float | None = None, on_change: Callable[[], None] | None = None):
        """``backoff_start``, ``backoff_max``: seconds before the first restart, and at most
        (defaults :data:`BACKOFF_START_SECONDS`, :data:`BACKOFF_MAX_SECONDS`). ``on_change`` is
        called when the task goes down or comes back, and when it ends."""
        self.name = name
        self.work = work
        self.backoff_start = BACKOFF_START_SECONDS if backoff_start is None else backoff_start
        self.backoff_max = BACKOFF_MAX_SECONDS if backoff_max is None else backoff_max
        self.on_change = on_change
        self.down_since: float | None = None
        """When the loop last failed or was stopped (None while it runs, and before it first
        starts)."""
        self.last_error: str | None = None
        """Why the loop last failed; kept after it is back, for status."""
        self.restarts = 0
        self.ended = False
        """The loop returned on its own: its work is done; not a failure."""
        self._task: asyncio.Task[None] | None = None

    def start(self) -> SupervisedTask:
        """Run :meth:`supervise` in an asyncio task named after the loop; returns ``self``."""
        self._task = asyncio.create_task(self.supervise(), name=self.name)
        return self

    async def supervise(self) -> None:
        """Run the loop, and again after each failure, until it returns or this is cancelled."""
        backoff = self.backoff_start
        while True:
            self._set_down(None)
            started = time.monotonic()
            failure: BaseException
            try:
                await self.work()
            except asyncio.CancelledError as exc:
                if _stopping():
                    self.down_since = time.time()  # stopped, not failed: nothing to announce
                    raise
                failure = exc
            except Exception as exc:
                failure = exc
            else:
                self._end()
                return
            if time.monotonic() - started > self.backoff_max:
                backoff = self.backoff_start  # it ran fine for a while: start over
            self._fail(failure, backoff)
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, self.backoff_max)
            self.restarts += 1

    def _fail(self, exc: BaseException, restart_in: float) -> None:
        self.last_error = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        self._set_down(time.time())
        log.error("task_failed task=%s error=%r restart_in=%gs", self.name, self.last_error,
                  restart_in, exc_info=exc)

    def _end(self) -> None:
        self.ended = True
        log.info("task_ended task=%s", self.name)
        if self.on_change is not None:
            self.on_change()

    def _set_down(self, since: float | None) -> None:
        changed = (since is None) != (self.down_since is None)
        self.down_since = since
        if changed and self.on_change is not None:
            self.on_change()

    @property
    def down(self) -> bool:
        return self.down_since is not None

    def row(self) -> dict[str, Any]:
        """The task for status: ``name``, ``healthy``, ``down_since``, ``restarts``,
        ``last_error``."""
        return {"name": self.name, "healthy": not self.down,
                "down_since": _iso(self.down_since) if self.down else None,
                "restarts": self.restarts, "last_error": self.last_error}

    async def aclose(self) -> None:
        """Stop the loop and wait until it has (nothing to do if it never started)."""
        await close_all([self])


async def close_all(tasks: Iterable[SupervisedTask]) -> None:
    """Cancel every task, then wait for them all (they stop together, not one after another)."""
    running = [t._task for t in tasks if t._task is not None]
    for task in running:
        task.cancel()
    await asyncio.gather(*running, return_exceptions=True)


def down_tasks(tasks: Iterable[SupervisedTask]) -> Mapping[str, str]:
    """The heartbeat's view: ``task NAME`` -> why, for each task that is down now."""
    return {f"task {t.name}": t.last_error or "not running" for t in tasks if t.down}
