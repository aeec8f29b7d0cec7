"""``boards.release`` and ``boards.reattach`` in a real agent (a simulated Uno): the board's
outputs go to their safe levels and it is closed and left alone until it is taken back, when its
pins are claimed again at their safe levels. The local operator's alone."""

from __future__ import annotations

import asyncio

from edge.control.ops import run_op
from edge.core.requester import Requester
from peripherals.supervisor import RECONNECT_INTERVAL

UNO = """
[boards.uno]
type = "arduino"
port = "/dev/ttyACM0"
simulate = true
aliases = { lamp = "D13" }
[boards.uno.pins]
lamp = { mode = "output", safe = "off" }
"""
OPERATOR = Requester("cli", "me")


def level(board, pin: str) -> float | None:
    return next((p.value for p in board.status().pins if p.name == pin), None)


async def test_a_released_board_is_safe_closed_and_left_alone_until_taken_back(start_agent):
    agent = await start_agent(UNO)
    runtime, uno = agent.runtime, agent.runtime.hardware.boards["uno"]
    assert (await run_op(runtime, "gpio.write", {"pin": "lamp", "value": "on"}, OPERATOR,
                         operator=True)).ok
    assert level(uno, "D13") == 1

    released = await run_op(runtime, "boards.release", {"board": "/dev/ttyACM0"}, OPERATOR,
                            operator=True)
    assert released.ok and released.data == {"board": "uno", "unsafe": []}
    assert "outputs safe, port closed" in released.message
    assert not uno.connected
    await asyncio.sleep(3 * RECONNECT_INTERVAL)  # three supervisor polls: it stays released
    assert not uno.connected
    refused = await run_op(runtime, "gpio.write", {"pin": "lamp", "value": "on"}, OPERATOR,
                           operator=True)
    assert not refused.ok and "board uno is lent out to be flashed" in refused.message

    back = await run_op(runtime, "boards.reattach", {"board": "uno"}, OPERATOR, operator=True)
    assert back.ok and back.data["connected"] and back.message.startswith("uno is back: ")
    assert level(uno, "D13") == 0  # claimed again at its safe level
    assert (await run_op(runtime, "gpio.write", {"pin": "lamp", "value": "on"}, OPERATOR,
                         operator=True)).ok


async def test_lending_is_the_local_operators_and_names_a_board_the_agent_has(start_agent):
    agent = await start_agent(UNO)
    runtime = agent.runtime
    stranger = await run_op(runtime, "boards.release", {"board": "uno"}, Requester("telegram", "42"))
    assert not stranger.ok and runtime.hardware.boards["uno"].connected
    unknown = await run_op(runtime, "boards.release", {"board": "/dev/ttyUSB9"}, OPERATOR,
                           operator=True)
    assert not unknown.ok and unknown.exit_code == 2 and unknown.data == {"board": None}
    assert "no board named or on '/dev/ttyUSB9' in this agent (its boards: " in unknown.message
