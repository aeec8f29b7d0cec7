"""One meaning of an input's "on", the same at every door, on gpiozero's mock pins (issue 35,
part 2): the float switch of the issue's table.

A float switch is wired from ``tank2`` (GPIO5, an input with the default ``pull = "up"``) to
ground and closes when the tank runs low. The README's pattern guards the mister:
``forbid = "mister on"``, ``while = "tank2 on"``. An input is on while it is active (gpiozero's
meaning), so:

| tank | line | edge-cli / chat / model | interlock | mister | Home Assistant |
|---|---|---|---|---|---|
| full, switch open | high | ``tank2 is off`` | clear | set on (allowed) | ``OFF`` |
| low, switch closed | low | ``tank2 is on`` | holding | refused (tripped off if on) | ``ON`` |

A real agent runs in this loop (every part started: the control socket, the MQTT bridge on a
real Mosquitto, the interlocks' watch) and the test walks the table, full -> low -> full -> low,
moving only the switch (the mock pin's line). At every step the views agree: the real
``edge-cli gpio read tank2`` through the agent's socket (text and ``--json``), chat's
``/gpio tank2``, the model's ``gpio_read`` tool result, the retained MQTT state a newly
subscribed Home Assistant gets, and ``edge-cli interlocks``; and the mister is allowed or
refused at each door (edge-cli, the model's tool, MQTT) as the table says.

Underneath, the mister's and the tank's lines are replayed from the mock pins' own records of
their levels: the mister never goes on while the tank is low, and when it was on as the tank
ran low, it went off (the trip) within a bound.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import accumulate
from pathlib import Path
from typing import Any

import pytest

from edge.agent.commands import CommandContext, run_command
from tests.fakes.inprocess import RunningAgent
from tests.fakes.mosquitto import Mosquitto, Watcher
from tests.helpers import asker, cli, until

BASE = "edge-agent/greenhouse"
TANK, MISTER = 5, 17
TRIP_BOUND_S = 0.5
"""How soon after the tank runs low a mister that is on must be off (the watch is poked by the
input's edge; it takes a few milliseconds here)."""
CONFIG = """
[boards.gpio.aliases]
tank2 = "GPIO{tank}"
mister = "GPIO{mister}"
[boards.gpio.pins]
tank2 = {{ mode = "input" }}  # pull = "up" by default: a float switch to ground
mister = {{ mode = "output", safe = "off", max_switches_per_minute = 60 }}
[security]
autonomy = "full"
max_actuations_per_minute = 1000
[mqtt]
url = "{url}"
node_id = "greenhouse"

[[interlocks]]
name = "dry-run"
forbid = "mister on"
while = "tank2 on"
"""
FULL = "gpio:GPIO5 (tank2) is off (switch open: line high, pulled up)"
LOW = "gpio:GPIO5 (tank2) is on (switch closed: line low, pulled up)"
HOLDING = "tank2 is on"
"""Why the interlock holds: its first words (what follows may name the wiring too)."""
REFUSED = f"mister: refused by interlock dry-run ({HOLDING}"
MODEL = asker("telegram:42", via_model=True)


@dataclass(frozen=True)
class Row:
    """One row of the issue's table: what every view says for one position of the switch."""

    tank: str
    sentence: str
    value: float
    line: str
    mqtt: str
    holding: bool


FULL_ROW = Row("full", FULL, 0.0, "high", "OFF", holding=False)
LOW_ROW = Row("low", LOW, 1.0, "low", "ON", holding=True)


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Mosquitto]:
    """A real Mosquitto for this test (Home Assistant's side of the bridge)."""
    with Mosquitto(tmp_path / "broker") as running:
        yield running


async def retained(broker: Mosquitto, topic: str) -> str:
    """What a client subscribing now (Home Assistant after a restart) is given for ``topic``:
    the retained message, which must be there."""
    async with Watcher(broker, topic) as fresh:
        payload = await fresh.wait(topic)
        assert [r for t, _, r in fresh.messages if t == topic][0], f"{topic} is not retained"
        return payload.decode()


async def views_agree(agent: RunningAgent, broker: Mosquitto, seen: Watcher, env: dict[str, str],
                      row: Row) -> None:
    """Every view of tank2 says what ``row`` says, and the interlock holds exactly when the
    tank is low."""
    runtime = agent.runtime
    await until(lambda: seen.payloads(f"{BASE}/tank2")[-1:] == [row.mqtt.encode()])  # live...
    assert await retained(broker, f"{BASE}/tank2") == row.mqtt  # ...and what HA is given

    tool = await runtime.tools["gpio_read"].execute({"pin": "tank2"}, MODEL)
    assert tool.success and tool.output == row.sentence and tool.data is not None, tool.output
    assert (tool.data["value"], tool.data["line"]) == (row.value, row.line), tool.data
    chat = CommandContext(tools=runtime.tools, status_text=no_status,
                          requester=asker("telegram:42"))
    assert await run_command("/gpio tank2", chat) == row.sentence

    text = await asyncio.to_thread(cli, "gpio", "read", "tank2", env=env)
    assert text.returncode == 0 and text.stdout.strip() == row.sentence, text
    as_json = await asyncio.to_thread(cli, "gpio", "read", "tank2", "--json", env=env)
    answer = json.loads(as_json.stdout)
    assert answer["via"] == "daemon", answer  # the agent's own read, through its socket
    data = answer["data"]
    assert (data["value"], data["line"], data["shown"]) == \
        (row.value, row.line, row.sentence.partition(" is ")[2]), data

    (lock,) = runtime.automation.interlocks.rows()
    assert lock["active"] is row.holding, lock
    assert (lock["why"] or "").startswith(HOLDING) is row.holding, lock
    listed = await asyncio.to_thread(cli, "interlocks", env=env)
    state = f"holding ({HOLDING}" if row.holding else "clear"
    assert listed.returncode == 0, listed
    assert f"dry-run: forbid mister on while tank2 on: {state}" in listed.stdout, listed.stdout


async def no_status(full: bool = True) -> str:
    return ""


def levels(pin: Any, since: float) -> list[tuple[float, int]]:
    """(monotonic time, level) of a mock pin's every level since its ``clear_states()`` at
    ``since``: gpiozero records each change with the time since the one before."""
    times = accumulate((s.timestamp for s in pin.states), initial=since)
    return [(at, int(s.state)) for at, s in zip(list(times)[1:], pin.states, strict=True)]


def mister_while_low(tank: list[tuple[float, int]], mister: list[tuple[float, int]]
                     ) -> tuple[list[str], list[float]]:
    """The two lines replayed in time order: what the mister did wrong while the tank was low
    (line 0), and how long each mister that was on as the tank ran low stayed on (the trip).
    Wrong: going on with the tank low, or staying on until the tank was full again or the
    record ended."""
    tape = sorted([(at, "tank", level) for at, level in tank] +
                  [(at, "mister", level) for at, level in mister])
    line, on = 1, 0
    ran_low: float | None = None  # when the tank ran low under a mister that is still on
    wrong: list[str] = []
    trips: list[float] = []
    for at, pin, level in tape:
        if pin == "tank":
            if ran_low is not None and level:
                wrong.append(f"mister on from {ran_low:.6f} until the tank was full at {at:.6f}")
                ran_low = None
            line = level
            if line == 0 and on:
                ran_low = at
            continue
        if level and not on and line == 0:
            wrong.append(f"mister on at {at:.6f} with the tank low")
        if not level and ran_low is not None:
            trips.append(at - ran_low)
            ran_low = None
        on = level
    if ran_low is not None:
        wrong.append(f"mister on from {ran_low:.6f} with the tank low, to the end")
    return wrong, trips


async def test_the_float_switch_table_holds_at_every_door(
        broker: Mosquitto, start_agent: Any, isolated_env: dict[str, str],
        mock_factory: Any) -> None:
    """Full -> low -> full -> low: edge-cli, chat, the tool result and the MQTT state agree at
    every step; the interlock holds exactly while the tank is low; the mister is allowed when
    the tank is full and refused (at edge-cli, the model's tool and MQTT) when it is low, and a
    mister left on is tripped off as the tank runs low."""
    agent = await start_agent(CONFIG.format(url=broker.url, tank=TANK, mister=MISTER))
    hardware = agent.runtime.hardware
    tank, mister = mock_factory.pin(TANK), mock_factory.pin(MISTER)
    assert tank.state == 1 and mister.state == 0  # pulled up, nothing closes it: the tank is full
    since = time.monotonic()
    tank.clear_states()
    mister.clear_states()
    async with Watcher(broker, f"{BASE}/#") as seen:
        await seen.wait(f"{BASE}/availability", "online")

        # full: off, clear; the mister may be set on (here by edge-cli)
        await views_agree(agent, broker, seen, isolated_env, FULL_ROW)
        done = await asyncio.to_thread(cli, "gpio", "write", "mister", "on", env=isolated_env)
        assert done.returncode == 0, done.stderr
        assert mister.state == 1
        await seen.wait(f"{BASE}/mister", "ON")

        # low, with the mister on: the trip drives it off; every door is refused
        mark = len(seen.messages)
        tank.drive_low()
        await until(lambda: mister.state == 0, timeout=TRIP_BOUND_S * 4)
        await seen.wait(f"{BASE}/mister", "OFF", after=mark)
        await views_agree(agent, broker, seen, isolated_env, LOW_ROW)
        assert agent.runtime.automation.interlocks.tripped["dry-run"].startswith(HOLDING)
        listed = await asyncio.to_thread(cli, "interlocks", env=isolated_env)
        assert f"TRIPPED ({HOLDING}" in listed.stdout, listed.stdout
        refused = await asyncio.to_thread(cli, "gpio", "write", "mister", "on", env=isolated_env)
        assert refused.returncode == 1 and REFUSED in refused.stderr, refused
        tool = await agent.runtime.tools["gpio_write"].execute(
            {"pin": "mister", "value": "on"}, MODEL)
        assert not tool.success and REFUSED in tool.text, tool.text
        assert mister.state == 0

        # full again: off, clear (the trip forgotten); the mister may be set on by MQTT and
        # by the model's tool
        tank.drive_high()
        await views_agree(agent, broker, seen, isolated_env, FULL_ROW)
        await until(lambda: not agent.runtime.automation.interlocks.tripped)
        mark = len(seen.messages)
        await seen.publish(f"{BASE}/mister/set", "ON")
        await seen.wait(f"{BASE}/mister", "ON", after=mark)
        assert mister.state == 1
        await hardware.write("mister", False, asker("telegram:42"))
        tool = await agent.runtime.tools["gpio_write"].execute(
            {"pin": "mister", "value": "on"}, MODEL)
        assert tool.success and mister.state == 1, tool.text
        await hardware.write("mister", False, asker("telegram:42"))
        assert mister.state == 0

        # low, with the mister off: nothing to trip; still refused at every door
        tank.drive_low()
        await views_agree(agent, broker, seen, isolated_env, LOW_ROW)
        mark = len(seen.messages)
        await seen.publish(f"{BASE}/mister/set", "ON")
        reason = json.loads(await seen.wait(f"{BASE}/refused", after=mark))["reason"]
        assert reason.startswith(REFUSED), reason
        refused = await asyncio.to_thread(cli, "gpio", "write", "mister", "on", env=isolated_env)
        assert refused.returncode == 1 and REFUSED in refused.stderr, refused
        assert mister.state == 0 and not agent.runtime.automation.interlocks.tripped

    wrong, trips = mister_while_low(levels(tank, since), levels(mister, since))
    assert [level for _, level in levels(tank, since)] == [1, 0, 1, 0]
    assert [level for _, level in levels(mister, since)] == [0, 1, 0, 1, 0, 1, 0]
    assert wrong == [], wrong
    assert len(trips) == 1 and trips[0] < TRIP_BOUND_S, trips


def test_the_replay_sees_a_mister_on_with_the_tank_low() -> None:
    """The pin-level check can fail: a mister that goes on while the tank is low, or one that
    stays on after the tank ran low, is seen; one tripped off is timed."""
    tank = [(0.0, 1), (1.0, 0), (3.0, 1)]
    assert mister_while_low(tank, [(0.0, 0), (2.0, 1), (4.0, 0)])[0] == \
        ["mister on at 2.000000 with the tank low"]
    assert mister_while_low(tank, [(0.0, 0), (0.5, 1), (3.5, 0)])[0] == \
        ["mister on from 1.000000 until the tank was full at 3.000000"]
    assert mister_while_low(tank[:2], [(0.0, 0), (0.5, 1)])[0] == \
        ["mister on from 1.000000 with the tank low, to the end"]
    wrong, trips = mister_while_low(tank, [(0.0, 0), (0.5, 1), (1.2, 0), (3.2, 1)])
    assert wrong == [] and trips == pytest.approx([0.2])
