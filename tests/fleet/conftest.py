"""A fleet on one real Mosquitto: agents (real Runtimes on gpiozero's mock pins) in the test's
own event loop, each with its own config and state directory, each pair of them paired as a
person pairs them (:func:`pair`: one side makes the key, the other types its code)."""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path
from typing import Any

import pytest

from edge.config.loader import load_config
from edge.fleet.keys import FleetKeys, new_code
from edge.runtime import Runtime
from tests.fakes.mosquitto import Mosquitto
from tests.fleet.wire import TESTER, TESTER_CODE

MQTT = """
[paths]
state_dir = "{state}"
[memory]
backend = "none"
[channels.cli]
enabled = false
[mqtt]
url = "{url}"
node_id = "{node}"
reconnect_max_seconds = 0.5
discovery = false
allow_commands = {allow}
"""


def pair(one: Path, other: Path, one_name: str, other_name: str) -> str:
    """Pair the agents whose state directories are ``one`` and ``other`` as ``edge-cli fleet
    pair`` does on each machine: ``one`` makes a key for ``other_name``, ``other`` files the
    code under ``one_name``. The code."""
    code = new_code()
    FleetKeys(one).file(other_name, code)
    FleetKeys(other).file(one_name, code)
    return code


class FleetAgent:
    def __init__(self, name: str, runtime: Runtime, task: asyncio.Task[None], state: Path):
        self.name = name
        self.runtime = runtime
        self.task = task
        self.state = state

    @property
    def bridge(self) -> Any:
        assert self.runtime.mqtt is not None
        return self.runtime.mqtt

    async def stop(self) -> None:
        if not self.task.done():
            self.runtime.request_stop("test")
            await asyncio.wait_for(self.task, 15)


@pytest.fixture
def broker(tmp_path):
    with Mosquitto(tmp_path / "broker") as running:
        yield running


@pytest.fixture
async def fleet_agent(tmp_path, isolated_env, mock_factory, monkeypatch):
    """``await fleet_agent(node_id, config_tail, url)``: a running agent whose bridge answers
    requests (:meth:`MqttBridge.serve_requests`), connected to the broker."""
    monkeypatch.delenv("EDGE_STATE_DIR")  # each agent has its own, in its config
    env = {k: v for k, v in isolated_env.items() if k != "EDGE_STATE_DIR"}
    started: list[FleetAgent] = []
    with contextlib.ExitStack() as stdins:

        async def start(node: str, tail: str, url: str, *, allow_commands: bool = True,
                        paired: bool = True, again: bool = False) -> FleetAgent:
            """``paired``: with every agent started before it, and with the raw asker;
            ``again``: the agent ``node`` (stopped) started anew on its state directory, keys
            and audit trail (a restart)."""
            folder = tmp_path / node
            if again:
                assert folder.is_dir(), f"{node} was never started"
            else:
                folder.mkdir()
            if paired and not again:
                for other in started:
                    pair(other.state, folder / "state", other.name, node)
                FleetKeys(folder / "state").file(TESTER, TESTER_CODE)
            config = folder / "config.toml"
            config.write_text(MQTT.format(url=url, node=node, allow=str(allow_commands).lower(),
                                          state=folder / "state")
                              + tail)
            loaded = load_config(str(config), env=env)
            runtime = Runtime(loaded, resident=True, pin_factory=mock_factory,
                              stdin=stdins.enter_context(open(os.devnull)))
            task = asyncio.create_task(runtime.run())
            while not runtime.ready.is_set():
                assert not task.done(), task.exception()
                await asyncio.sleep(0.01)
            agent = FleetAgent(node, runtime, task, folder / "state")
            agent.bridge.serve_requests(runtime)  # idempotent where the assembly does it too
            started.append(agent)
            while not agent.bridge.connected:
                await asyncio.sleep(0.01)
            return agent

        yield start
        for agent in started:
            await agent.stop()
