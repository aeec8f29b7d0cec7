"""A real Runtime run in the test's own event loop (on gpiozero's mock pins), for tests that
talk to it through loopback chat servers or drive its pins and clock directly."""

from __future__ import annotations

import asyncio
import contextlib
import os

import pytest

from edge.config.loader import load_config
from edge.runtime import Runtime


class RunningAgent:
    def __init__(self, runtime: Runtime, task: asyncio.Task):
        self.runtime = runtime
        self.task = task

    async def stop(self) -> None:
        self.runtime.request_stop("test")
        await asyncio.wait_for(self.task, 15)


@pytest.fixture
async def start_agent(isolated_env, write_config, mock_factory):
    """``await start_agent(config_text, **runtime_options)``: the agent, running once it is
    ready (every part started); stopped at the end of the test."""
    started: list[RunningAgent] = []
    with contextlib.ExitStack() as stdins:  # closed once the agents have stopped

        async def start(config_text: str, **options) -> RunningAgent:
            path = write_config(config_text)
            loaded = load_config(str(path), env=isolated_env)
            runtime = Runtime(loaded, resident=True, pin_factory=mock_factory,
                              stdin=stdins.enter_context(open(os.devnull)), **options)
            task = asyncio.create_task(runtime.run())
            while not runtime.ready.is_set():
                assert not task.done(), task.exception()
                await asyncio.sleep(0.01)
            agent = RunningAgent(runtime, task)
            started.append(agent)
            return agent

        yield start
        for agent in started:
            if not agent.task.done():
                await agent.stop()
