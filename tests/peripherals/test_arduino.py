"""The arduino board driver (pyfirmata2) against our Firmata sketch in simavr."""

from __future__ import annotations

import asyncio

import pytest

from peripherals.arduino import ArduinoBoard
from peripherals.base import PinMode, Pull
from peripherals.exc import BoardUnavailable, PinModeError, UnknownPin

pytestmark = pytest.mark.emulator


def test_pin_names():
    board = ArduinoBoard("uno", "/dev/null", aliases={"led": "13", "pot": "a0"})
    assert [board.resolve(s) for s in ("led", "pot", "D2", "7", "17")] == ["D13", "A0", "D2", "D7", "A3"]
    for bad in ("D0", "1", "D20", "A6", "GPIO17"):
        with pytest.raises(UnknownPin):
            board.resolve(bad)


@pytest.fixture
async def uno(simavr_uno):
    board = ArduinoBoard("uno", str(simavr_uno.link), watchdog_ms=800)
    await board.connect()
    yield board
    await board.close()


async def test_handshake_finds_our_firmware_and_its_watchdog(uno):
    assert uno.connected and uno.has_watchdog
    assert uno.status().detail.startswith("EdgeFirmata 2.5")


async def test_digital_write_produces_the_pin_edge(uno, simavr_uno):
    await uno.setup_pin("D13", PinMode.OUTPUT)
    await uno.write("D13", True)
    simavr_uno.wait_edge("D13", 1)
    await uno.write("D13", False)
    simavr_uno.wait_edge("D13", 0, after=simavr_uno.levels("D13").index(1))


async def test_input_edge_arrives_as_an_event(uno, simavr_uno):
    events = []
    uno.subscribe(events.append)
    await uno.setup_pin("D2", PinMode.INPUT, Pull.NONE)
    simavr_uno.drive("D2", 1)
    for _ in range(200):
        if any(e.kind == "input" for e in events):
            break
        await asyncio.sleep(0.01)
    assert [(e.pin, e.value) for e in events if e.kind == "input"] == [("D2", 1.0)]
    assert await uno.read("D2") == 1.0


async def test_analog_reads_the_injected_voltage(uno, simavr_uno):
    simavr_uno.set_adc("A0", 2500)
    await uno.setup_pin("A0", PinMode.ANALOG)
    await asyncio.sleep(0.1)
    assert await uno.read("A0") == pytest.approx(511 / 1023, abs=0.002)


async def test_pwm_and_servo(uno, simavr_uno):
    await uno.setup_pin("D9", PinMode.PWM)
    await uno.pwm("D9", 0.5)
    assert await uno.read("D9") == 0.5
    with pytest.raises(PinModeError, match="fixed"):
        await uno.pwm("D9", 0.5, 1000)
    with pytest.raises(PinModeError, match="no PWM"):
        await uno.setup_pin("D7", PinMode.PWM)
    await uno.servo("D10", 90)
    with pytest.raises(PinModeError, match="D9 and D10"):
        await uno.servo("D3", 10)


async def test_firmware_watchdog_drives_safe_values(uno, simavr_uno):
    events = []
    uno.subscribe(events.append)
    await uno.setup_pin("D8", PinMode.OUTPUT)
    await uno.declare_safe_state({"D8": False})
    await uno.write("D8", True)
    simavr_uno.wait_edge("D8", 1)
    await asyncio.sleep(1.0)  # keep-alives hold the watchdog off
    assert simavr_uno.levels("D8")[-1] == 1
    uno._generation += 1  # the host hangs: no more keep-alives, port still open
    simavr_uno.wait_edge("D8", 0, after=len(simavr_uno.levels("D8")), timeout=3)


async def test_unplug_is_reported_and_reconnect_restores(uno, simavr_uno):
    events = []
    uno.subscribe(events.append)
    await uno.setup_pin("D13", PinMode.OUTPUT)
    await uno.write("D13", True)
    simavr_uno.stop()
    for _ in range(200):
        if not uno.connected:
            break
        await asyncio.sleep(0.01)
    assert not uno.connected
    with pytest.raises(BoardUnavailable, match="down"):
        await uno.write("D13", False)
    simavr_uno.start()
    await uno.connect()
    simavr_uno.wait_edge("D13", 1)
    assert [e.kind for e in events] == ["down", "up"]
