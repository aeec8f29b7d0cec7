"""The simulated forms of the microcontroller boards and a fleet node (``simulate = true``):
the real board's pin names and capabilities, levels held, an input's change reported as an edge,
and what the real driver refuses refused the same way."""

from __future__ import annotations

import pytest

from edge.fleet.board import SPEC as NODE
from peripherals.base import BoardEvent, PinMode, Pull
from peripherals.exc import PinModeError, UnknownPin
from peripherals.factory import create_board


async def test_a_simulated_stm32_has_its_ports_and_reports_an_edge():
    board = create_board("f4", "stm32", {"port": "/dev/ttyACM1", "simulate": True,
                                         "aliases": {"key": "PC13", "level": "PA0"}})
    await board.connect()
    seen: list[BoardEvent] = []
    board.subscribe(seen.append)
    await board.setup_pin("key", PinMode.INPUT, Pull.UP)
    assert await board.read("key") == 1.0  # pulled up, nothing pressed
    await board.simulate_input("key", 0)
    assert seen == [BoardEvent("f4", "input", "PC13", 0.0)]
    await board.setup_pin("level", PinMode.ANALOG)
    await board.simulate_input("level", 0.25)
    assert await board.read("level") == 0.25 and len(seen) == 1  # analog is read, not an edge
    with pytest.raises(UnknownPin, match="PA2/PA3, the link"):
        board.resolve("PA2")
    await board.setup_pin("PA8", PinMode.PWM)
    with pytest.raises(PinModeError, match="cannot drive servos"):
        await board.servo("PA8", 90)


async def test_a_simulated_uno_refuses_what_an_uno_cannot_do():
    board = create_board("uno", "arduino", {"port": "/dev/ttyACM0", "simulate": True})
    await board.connect()
    with pytest.raises(UnknownPin, match="serial link"):
        board.resolve("D1")
    with pytest.raises(PinModeError, match="cannot be pwm"):
        await board.setup_pin("D2", PinMode.PWM)
    await board.setup_pin("D9", PinMode.PWM)
    await board.servo("D9", 90)
    assert board.status().pins[0].value == 0.5
    with pytest.raises(PinModeError, match="not set up"):
        await board.simulate_input("D3", 1)


async def test_a_simulated_uno_holds_a_servo_to_its_range():
    board = create_board("uno", "arduino", {"port": "/dev/ttyACM0", "simulate": True,
                                            "servos": {"10": {"min_angle": 30, "max_angle": 90}}})
    await board.connect()
    await board.setup_pin("D10", PinMode.PWM)
    await board.servo("D10", 45)
    assert board.status().pins[0].value == 0.25  # a quarter of 30..90
    with pytest.raises(PinModeError, match="angle 100 is outside D10's range 30..90 degrees"):
        await board.servo("D10", 100)


async def test_a_simulated_node_has_the_pins_its_allowlist_names():
    options = NODE.options.model_validate({"node_id": "shed", "simulate": True})
    object.__setattr__(options, "pins", {"pump": {}, "float": {}})  # the agent's section adds them
    board = NODE.build("shed", options, None)
    await board.connect()
    await board.setup_pin("float", PinMode.INPUT, Pull.UP)
    assert await board.read("float") == 0.0  # a node reports meanings: not active
    await board.simulate_input("float", 1)
    assert await board.read("float") == 1.0
    assert board.status().simulated and board.kind == "node"
    with pytest.raises(UnknownPin):
        board.resolve("valve")


async def test_a_real_board_refuses_to_pretend():
    board = create_board("uno", "arduino", {"port": "/dev/ttyACM0"})
    with pytest.raises(PinModeError, match=r"drives real hardware; set \[boards.uno\] simulate"):
        await board.simulate_input("D2", 1)
