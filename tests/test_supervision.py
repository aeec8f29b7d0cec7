"""A supervised task: a loop that fails is logged with its traceback, shown down with its error,
and started again after a backoff that doubles up to a cap (and starts over after a good run);
a loop that returns has ended; stopping it is clean; the heartbeat sees what is down."""

from __future__ import annotations

import asyncio
import logging

from edge.core.supervision import SupervisedTask, close_all, down_tasks
from tests.helpers import until


class Script:
    """A loop that fails ``failures`` times (after ``runs_for`` seconds each), then runs until
    cancelled; it counts its starts and whether each was cancelled."""

    def __init__(self, failures: int = 1, runs_for: float = 0.0,
                 error: BaseException | None = None):
        self.failures, self.runs_for = failures, runs_for
        self.error = error or RuntimeError("the bus went away")
        self.starts = 0
        self.cancelled = 0

    async def __call__(self) -> None:
        self.starts += 1
        try:
            if self.starts <= self.failures:
                await asyncio.sleep(self.runs_for)
                raise self.error
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            self.cancelled += 1
            raise


def failures_logged(caplog, name: str) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.getMessage().startswith(f"task_failed task={name} ")]


def delays_logged(caplog, name: str) -> list[float]:
    """The ``restart_in`` of each failure logged (from the message: a structured-log handler
    left by another test may have merged the arguments into it)."""
    return [float(r.getMessage().rpartition("restart_in=")[2].rstrip("s"))
            for r in failures_logged(caplog, name)]


async def test_a_loop_that_fails_is_logged_with_its_traceback_shown_down_and_started_again(caplog):
    script = Script()
    task = SupervisedTask("poller", script, backoff_start=0.2).start()
    try:
        await until(lambda: task.down)
        (record,) = failures_logged(caplog, "poller")
        assert record.levelno == logging.ERROR and record.exc_info is not None
        assert "restart_in=0.2s" in record.getMessage()
        assert "Traceback (most recent call last)" in caplog.text and "the bus went away" in caplog.text
        row = task.row()
        assert row["name"] == "poller" and not row["healthy"] and row["down_since"]
        assert row["last_error"] == "RuntimeError: the bus went away" and row["restarts"] == 0
        assert down_tasks([task]) == {"task poller": "RuntimeError: the bus went away"}
        await until(lambda: script.starts == 2)
        row = task.row()
        assert row["healthy"] and row["down_since"] is None and row["restarts"] == 1
        assert row["last_error"] == "RuntimeError: the bus went away"  # kept for status
        assert down_tasks([task]) == {}
    finally:
        await task.aclose()


async def test_the_backoff_doubles_up_to_its_cap_and_starts_over_after_a_good_run(caplog):
    script = Script(failures=4)
    task = SupervisedTask("flaky", script, backoff_start=0.01, backoff_max=0.04).start()
    try:
        await until(lambda: script.starts == 5)
        delays = delays_logged(caplog, "flaky")
        assert delays == [0.01, 0.02, 0.04, 0.04]
    finally:
        await task.aclose()
    caplog.clear()
    script = Script(failures=3, runs_for=0.06)  # each run lasts longer than the cap
    task = SupervisedTask("steady", script, backoff_start=0.01, backoff_max=0.04).start()
    try:
        await until(lambda: script.starts == 4)
        assert delays_logged(caplog, "steady") == [0.01, 0.01, 0.01]
        assert task.restarts == 3
    finally:
        await task.aclose()


async def test_a_loop_that_returns_has_ended_and_is_not_started_again(caplog):
    caplog.set_level(logging.INFO)
    starts, changes = [], []

    async def finite() -> None:
        starts.append(1)

    task = SupervisedTask("reader", finite, on_change=lambda: changes.append(1))
    await task.supervise()
    assert starts == [1] and task.ended and not task.down and task.row()["healthy"]
    assert changes == [1] and "task_ended task=reader" in caplog.text
    assert not failures_logged(caplog, "reader")


async def test_stopping_cancels_the_loop_cleanly_without_a_restart(caplog):
    script = Script(failures=0)
    first, second = SupervisedTask("a", script).start(), SupervisedTask("b", script).start()
    await until(lambda: script.starts == 2)
    await close_all([first, second])
    assert script.cancelled == 2 and script.starts == 2
    assert not failures_logged(caplog, "a") and not failures_logged(caplog, "b")
    await SupervisedTask("never-started", script).aclose()  # nothing to stop


async def test_a_cancelled_error_nobody_asked_for_is_a_failure():
    """A CancelledError that escapes the loop (a future cancelled under it) while nobody is
    stopping the task must not end it silently."""
    script = Script(error=asyncio.CancelledError())
    task = SupervisedTask("inner", script, backoff_start=0.01).start()
    try:
        await until(lambda: script.starts == 2)
        assert task.restarts == 1 and task.last_error == "CancelledError"
    finally:
        await task.aclose()


async def test_going_down_and_coming_back_is_announced_once_each():
    changes: list[bool] = []
    script = Script(failures=2)
    task = SupervisedTask("noisy", script, backoff_start=0.01,
                          on_change=lambda: changes.append(task.down))
    task.start()
    try:
        await until(lambda: script.starts == 3)
        assert changes == [True, False, True, False]
    finally:
        await task.aclose()
