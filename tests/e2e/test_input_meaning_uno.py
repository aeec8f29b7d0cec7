"""One meaning of an input's "on" on the emulated Uno (simavr running our Firmata firmware; issue
35, part 2): the float switch of the issue's table on a pulled-up input.

``tank2`` is D3 with ``pull = "up"`` (Firmata's INPUT_PULLUP: the ATmega's own pull-up holds the
line high); a float switch to ground closes when the tank runs low, which here is the emulator
driving D3 low. ``forbid = "mister on"`` while ``tank2 on``; the mister is D12, an output on the
other port (PORTB). It must be: simavr 1.6 puts an input's pull-up back on its pin at every write
to that pin's port register, over the level the test drives, so with the mister on D4 (PORTD,
D3's port) the trip's own write reopened the switch in the emulator (a real ATmega's switch to
ground wins over its 20-50 kOhm pull-up).

A real agent runs in this loop (the Uno through its pty, the control socket, the MQTT bridge on a
real Mosquitto, the interlocks' watch) and the test walks the table, full -> low -> full -> low,
moving only the line. At every step the model's ``gpio_read`` result, the real ``edge-cli gpio
read tank2`` (text and ``--json``) through the agent's socket and the retained MQTT state agree,
the interlock is clear or holding, and the mister is set on or refused; the mister's pin, as the
emulated CPU drove it (the front end's pin reports), went high only while the tank was full, and
low within a bound after the tank ran low under it.

Without the pull-up (``pull = "none"``) the emulated line does not rest high, and the first step
fails: the ATmega's pull-up, set by Firmata's INPUT_PULLUP, is what reads "full" here.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.emulation.simavr import SimAvr
from tests.fakes.inprocess import RunningAgent
from tests.fakes.mosquitto import Mosquitto, Watcher
from tests.helpers import asker, cli, until

pytestmark = pytest.mark.emulator

BASE = "edge-agent/uno-tank"
TRIP_BOUND_S = 1.0
"""How soon after the tank runs low a mister that is on must be off on the emulated pin: the
firmware reports D3's change, the watch trips, the firmware drives D12 (a few milliseconds
each)."""
UNO = """
[boards.gpio]
pins = {{}}
aliases = {{}}
[boards.uno]
type = "arduino"
port = "{port}"
aliases = {{ tank2 = "D3", mister = "D12" }}
[boards.uno.pins]
tank2 = {{ mode = "input", pull = "up" }}
mister = {{ mode = "output", safe = "off", max_switches_per_minute = 60 }}
[security]
autonomy = "full"
max_actuations_per_minute = 1000
[mqtt]
url = "{url}"
node_id = "uno-tank"

[[interlocks]]
name = "dry-run"
forbid = "mister on"
while = "tank2 on"
"""
FULL = ("uno:D3 (tank2) is off (switch open: line high, pulled up)", 0.0, "high", "OFF")
LOW = ("uno:D3 (tank2) is on (switch closed: line low, pulled up)", 1.0, "low", "ON")
HOLDING = "tank2 is on"
"""Why the interlock holds: its first words (what follows may name the wiring too)."""
REFUSED = f"mister: refused by interlock dry-run ({HOLDING}"
MODEL = asker("telegram:42", via_model=True)


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Mosquitto]:
    """A real Mosquitto for this test (Home Assistant's side of the bridge)."""
    with Mosquitto(tmp_path / "broker") as running:
        yield running


async def views_agree(agent: RunningAgent, broker: Mosquitto, seen: Watcher, env: dict[str, str],
                      row: tuple[str, float, str, str]) -> None:
    """The tool, edge-cli through the socket and the MQTT state (live and retained) say what
    ``row`` says; the interlock holds exactly while the tank is low."""
    sentence, value, line, state = row
    topic = f"{BASE}/tank2"
    await until(lambda: seen.payloads(topic)[-1:] == [state.encode()])
    async with Watcher(broker, topic) as fresh:  # what Home Assistant is given on subscribing
        assert await fresh.wait(topic) == state.encode() and fresh.messages[0][2], fresh.messages
    tool = await agent.runtime.tools["gpio_read"].execute({"pin": "tank2"}, MODEL)
    assert tool.success and tool.output == sentence and tool.data is not None, tool.output
    assert (tool.data["value"], tool.data["line"]) == (value, line), tool.data
    text = await asyncio.to_thread(cli, "gpio", "read", "tank2", env=env)
    assert text.returncode == 0 and text.stdout.strip() == sentence, text
    out = await asyncio.to_thread(cli, "gpio", "read", "tank2", "--json", env=env)
    answer = json.loads(out.stdout)
    assert answer["via"] == "daemon" and answer["data"]["value"] == value, answer
    assert (answer["data"]["line"], answer["data"]["shown"]) == \
        (line, sentence.partition(" is ")[2]), answer
    (lock,) = agent.runtime.automation.interlocks.rows()
    holding = value == 1.0
    assert lock["active"] is holding and (lock["why"] or "").startswith(HOLDING) is holding, lock


def mister_on_while_low(uno: SimAvr, low: list[tuple[float, float]]) -> list[str]:
    """Each time the emulated CPU drove D12 high while the tank was low (each window: from the
    drive that closed the switch to the one that opened it)."""
    return [f"D12 high at {at:.3f} while the tank was low ({start:.3f}..{end:.3f})"
            for pin, level, at in uno.edges if pin == "D12" and level == 1
            for start, end in low if start <= at <= end]


async def test_the_float_switch_table_on_the_emulated_uno(
        simavr_uno: SimAvr, broker: Mosquitto, start_agent: Any, isolated_env: dict[str, str]
        ) -> None:
    """Full -> low -> full -> low on D3 (INPUT_PULLUP): the tool, edge-cli and the MQTT state
    agree; the interlock holds exactly while the tank is low; the mister is set on when the
    tank is full, refused (edge-cli, the model's tool, MQTT) when it is low, and tripped off
    on its emulated pin as the tank runs low under it."""
    agent = await start_agent(UNO.format(port=simavr_uno.link, url=broker.url))
    env = isolated_env
    low: list[tuple[float, float]] = []
    async with Watcher(broker, f"{BASE}/#") as seen:
        await seen.wait(f"{BASE}/availability", "online")

        # full: the pull-up holds the line high; the mister may be set on (by edge-cli)
        await views_agree(agent, broker, seen, env, FULL)
        ons = len(simavr_uno.levels("D12"))
        done = await asyncio.to_thread(cli, "gpio", "write", "mister", "on", env=env)
        assert done.returncode == 0, done.stderr
        await asyncio.to_thread(simavr_uno.wait_edge, "D12", 1, ons)

        # low, under the mister: the trip drives D12 low; every door is refused
        offs = len(simavr_uno.levels("D12"))
        simavr_uno.drive("D3", 0)
        closed = time.monotonic()
        tripped = await asyncio.to_thread(simavr_uno.wait_edge, "D12", 0, offs, TRIP_BOUND_S)
        assert tripped - closed < TRIP_BOUND_S
        await views_agree(agent, broker, seen, env, LOW)
        refused = await asyncio.to_thread(cli, "gpio", "write", "mister", "on", env=env)
        assert refused.returncode == 1 and REFUSED in refused.stderr, refused
        tool = await agent.runtime.tools["gpio_write"].execute(
            {"pin": "mister", "value": "on"}, MODEL)
        assert not tool.success and REFUSED in tool.text, tool.text
        simavr_uno.drive("D3", 1)
        low.append((closed, time.monotonic()))

        # full again: clear; the mister may be set on (by MQTT), then off
        await views_agree(agent, broker, seen, env, FULL)
        ons = len(simavr_uno.levels("D12"))
        mark = len(seen.messages)
        await seen.publish(f"{BASE}/mister/set", "ON")
        await seen.wait(f"{BASE}/mister", "ON", after=mark)
        await asyncio.to_thread(simavr_uno.wait_edge, "D12", 1, ons)
        await seen.publish(f"{BASE}/mister/set", "OFF")
        await asyncio.to_thread(simavr_uno.wait_edge, "D12", 0, ons + 1)

        # low, the mister off: nothing to trip; refused at MQTT
        simavr_uno.drive("D3", 0)
        closed = time.monotonic()
        await views_agree(agent, broker, seen, env, LOW)
        mark = len(seen.messages)
        await seen.publish(f"{BASE}/mister/set", "ON")
        reason = json.loads(await seen.wait(f"{BASE}/refused", after=mark))["reason"]
        assert reason.startswith(REFUSED), reason
        await asyncio.sleep(0.2)  # a refused command drives nothing, not even late
        low.append((closed, time.monotonic()))

    assert mister_on_while_low(simavr_uno, low) == []
    levels = simavr_uno.levels("D12")  # on (edge-cli), the trip, on (MQTT), off (MQTT)
    assert levels[-4:] == [1, 0, 1, 0] and levels.count(1) == 2, levels
