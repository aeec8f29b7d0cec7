"""The gpio board reports input changes as BoardEvents, on the loop it was connected from."""

from __future__ import annotations

import asyncio

import pytest

from peripherals.base import Board, PinMode, Pull
from peripherals.exc import PinModeError
from peripherals.gpio import GpioBoard


async def test_input_changes_arrive_as_events(mock_factory):
    board = GpioBoard("gpio", aliases={"button": "GPIO27"}, pin_factory=mock_factory)
    assert isinstance(board, Board)
    events = []
    unsubscribe = board.subscribe(events.append)
    await board.connect()
    await board.setup_pin("button", PinMode.INPUT, Pull.UP)
    mock_factory.pin(27).drive_low()   # pressed (pull-up: active low)
    mock_factory.pin(27).drive_high()
    await asyncio.sleep(0.05)
    # the electrical level, as read() reports it: pressed = low = 0
    assert [(e.board, e.kind, e.pin, e.value) for e in events] == [
        ("gpio", "input", "GPIO27", 0.0), ("gpio", "input", "GPIO27", 1.0)]
    unsubscribe()
    mock_factory.pin(27).drive_low()
    await asyncio.sleep(0.05)
    assert len(events) == 2
    await board.close()


async def test_the_pi_has_no_analog_pins(mock_factory):
    board = GpioBoard("gpio", pin_factory=mock_factory)
    with pytest.raises(PinModeError, match="no analog"):
        await board.setup_pin("GPIO17", PinMode.ANALOG)
