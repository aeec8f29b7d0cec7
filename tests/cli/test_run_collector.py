"""``edge-cli run`` keeps Python's cycle collector off while the agent starts, freezes what the
start built once it is ready and turns the collector back on; a start that fails turns it back
on too."""

from __future__ import annotations

import asyncio
import gc

import pytest

from edge.cli.run import run_collecting_once_ready


class Runtime:
    """What run_collecting_once_ready uses of edge.runtime.Runtime: ``ready`` and ``run``."""

    def __init__(self, fails: bool = False) -> None:
        self.ready = asyncio.Event()
        self.fails = fails
        self.seen: list[tuple[str, bool, int]] = []

    async def run(self) -> None:
        self.seen.append(("starting", gc.isenabled(), gc.get_freeze_count()))
        if self.fails:
            raise RuntimeError("the board would not open")
        self.ready.set()
        await asyncio.sleep(0.01)
        self.seen.append(("working", gc.isenabled(), gc.get_freeze_count()))


@pytest.fixture
def collector():
    gc.unfreeze()
    gc.disable()  # as run_agent leaves it before the start
    yield
    gc.unfreeze()
    gc.enable()


async def test_off_while_starting_then_frozen_and_on(collector) -> None:
    runtime = Runtime()
    await run_collecting_once_ready(runtime)  # type: ignore[arg-type]
    [(_, on_starting, frozen_starting), (_, on_working, frozen_working)] = runtime.seen
    assert (on_starting, frozen_starting) == (False, 0)
    assert on_working and frozen_working > 0
    assert gc.isenabled()


async def test_a_failed_start_turns_it_back_on(collector) -> None:
    with pytest.raises(RuntimeError, match="would not open"):
        await run_collecting_once_ready(Runtime(fails=True))  # type: ignore[arg-type]
    assert gc.isenabled() and gc.get_freeze_count() == 0
