"""The arduino board driver (pyfirmata2) in simavr, against our Firmata sketch and against stock
StandardFirmata (a prebuilt release fetched from npm): what does not need the watchdog extension
runs on both."""

from __future__ import annotations

import asyncio
import time

import pytest

from peripherals.arduino import ArduinoBoard
from peripherals.base import PinMode, Pull
from peripherals.discovery import FoundPort, confirm
from peripherals.exc import BoardUnavailable, PinModeError, UnknownPin
from peripherals.firmata import FIRMATA_OUTPUT, plausible_report
from tests.emulation.build import OPTIBOOT
from tests.emulation.simavr import SimAvr

pytestmark = pytest.mark.emulator
SERVO = 4  # Firmata's pin mode


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


@pytest.fixture
async def any_uno(firmata_uno):
    """The driver connected to each sketch; tests that take it run twice."""
    board = ArduinoBoard("uno", str(firmata_uno.link), watchdog_ms=800)
    await board.connect()
    yield board
    await board.close()


async def test_handshake_finds_our_firmware_and_its_watchdog(uno):
    assert uno.connected and uno.has_watchdog
    assert uno.status().detail.startswith("EdgeFirmata 2.5")
    assert uno.status().info["watchdog"] == "firmware"


@pytest.fixture
async def stock_uno(stock_simavr_uno):
    board = ArduinoBoard("uno", str(stock_simavr_uno.link), watchdog_ms=800)
    await board.connect()
    yield board
    await board.close()


async def test_stock_firmata_is_found_without_a_watchdog_and_status_warns(stock_uno):
    any_uno = stock_uno
    assert any_uno.connected and not any_uno.has_watchdog
    status = any_uno.status()
    assert status.detail.startswith("StandardFirmata") and "host-side safe state only" in status.detail
    assert status.info["watchdog"] == "none" and "warning" not in status.info  # no outputs yet
    await any_uno.setup_pin("D13", PinMode.OUTPUT)
    warning = any_uno.status().info["warning"]
    assert "no firmware watchdog" in warning and "D13 stay as they are" in warning
    assert "edge-cli firmware flash" in warning


async def test_watchdog_is_found_on_every_fresh_boot(simavr_uno):
    """The probe is retried and fenced, so a board just out of reset is never taken for one
    without a watchdog (a single 0.5 s wait missed it on 5 of 19 boots)."""
    for _ in range(4):
        simavr_uno.stop()
        simavr_uno.start()
        board = ArduinoBoard("uno", str(simavr_uno.link), watchdog_ms=0)
        await board.connect()
        assert board.has_watchdog, board.status().detail
        await board.close()


def test_a_garbled_firmware_report_is_never_accepted():
    assert plausible_report((2, 5, *b"E\0d\0g\0e\0")) == ("Edge", 2, 5)
    assert plausible_report((2, 69, 0, 100, 0, 103, 0)) is None  # the minor byte was lost
    assert plausible_report((2, 5)) is None


async def test_digital_write_produces_the_pin_edge(any_uno, firmata_uno):
    await any_uno.setup_pin("D13", PinMode.OUTPUT)
    before = len(firmata_uno.levels("D13"))  # stock Firmata blinks D13 at boot
    await any_uno.write("D13", True)
    firmata_uno.wait_edge("D13", 1, after=before)
    await any_uno.write("D13", False)
    firmata_uno.wait_edge("D13", 0, after=before + 1)


async def test_input_edge_arrives_as_an_event(any_uno, firmata_uno):
    events = []
    any_uno.subscribe(events.append)
    await any_uno.setup_pin("D2", PinMode.INPUT, Pull.NONE)
    firmata_uno.drive("D2", 1)
    for _ in range(200):
        if any(e.kind == "input" for e in events):
            break
        await asyncio.sleep(0.01)
    assert [(e.pin, e.value) for e in events if e.kind == "input"] == [("D2", 1.0)]
    assert await any_uno.read("D2") == 1.0


async def test_analog_reads_the_injected_voltage(any_uno, firmata_uno):
    firmata_uno.set_adc("A0", 2500)
    await any_uno.setup_pin("A0", PinMode.ANALOG)
    await asyncio.sleep(0.1)
    assert await any_uno.read("A0") == pytest.approx(511 / 1023, abs=0.002)


async def test_pwm_and_servo(any_uno, firmata_uno):
    await any_uno.setup_pin("D9", PinMode.PWM)
    await any_uno.pwm("D9", 0.5)
    assert await any_uno.read("D9") == 0.5
    with pytest.raises(PinModeError, match="fixed"):
        await any_uno.pwm("D9", 0.5, 1000)
    with pytest.raises(PinModeError, match="no PWM"):
        await any_uno.setup_pin("D7", PinMode.PWM)
    await any_uno.servo("D10", 90)
    with pytest.raises(PinModeError, match="D9 and D10"):
        await any_uno.servo("D3", 10)


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


async def test_unplug_is_reported_and_reconnect_restores(any_uno, firmata_uno):
    events = []
    any_uno.subscribe(events.append)
    await any_uno.setup_pin("D13", PinMode.OUTPUT)
    await any_uno.write("D13", True)
    firmata_uno.stop()
    for _ in range(200):
        if not any_uno.connected:
            break
        await asyncio.sleep(0.01)
    assert not any_uno.connected
    with pytest.raises(BoardUnavailable, match="down"):
        await any_uno.write("D13", False)
    firmata_uno.start()
    await any_uno.connect()
    await asyncio.sleep(0.2)
    assert firmata_uno.levels("D13")[-1] == 1  # after stock Firmata's boot blink, re-applied
    assert [e.kind for e in events] == ["down", "up"]


async def test_servos_are_set_up_again_after_a_reconnect(any_uno, firmata_uno):
    await any_uno.servo("D10", 90)
    assert (await asyncio.to_thread(any_uno._query_pin, 10))[0] == SERVO
    firmata_uno.stop()
    while any_uno.connected:
        await asyncio.sleep(0.01)
    firmata_uno.start()
    await any_uno.connect()
    assert (await asyncio.to_thread(any_uno._query_pin, 10))[0] == SERVO


async def test_adopting_an_output_keeps_its_level(any_uno, firmata_uno):
    """What a one-shot command sees on a board with auto-reset disabled (README): a second
    driver (a new process) adopts D12 at the level the first left it, reads it, and writing D13
    on the same port leaves D12 alone."""
    await any_uno.setup_pin("D12", PinMode.OUTPUT)
    await any_uno.write("D12", True)
    firmata_uno.wait_edge("D12", 1)
    await any_uno.close()
    firmata_uno.set_auto_reset(False)
    before = len(firmata_uno.levels("D12"))
    second = ArduinoBoard("uno", str(firmata_uno.link), watchdog_ms=0)
    await second.connect()
    try:
        await second.adopt_pin("D12", PinMode.OUTPUT)
        assert await second.read("D12") == 1.0
        await second.adopt_pin("D13", PinMode.OUTPUT)
        await second.write("D13", True)
        assert (await asyncio.to_thread(second._query_pin, 12)) == (FIRMATA_OUTPUT, 1)
        await asyncio.sleep(0.1)
        assert firmata_uno.levels("D12")[before:] == []
    finally:
        await second.close()


async def test_discovery_waits_for_stock_firmata_to_start(firmata_uno):
    """A real Uno restarts when the port opens (DTR), and stock Firmata answers about 2.8 s after
    that: discovery allows for it (its own 2.5 s probe did not)."""
    firmata_uno.stop()
    firmata_uno.start()  # just out of reset, as when discovery opens the port
    found = await confirm(FoundPort(str(firmata_uno.link), likely="arduino"))
    assert found.confirmed == "arduino", found.detail


async def test_opening_the_port_resets_the_board_as_dtr_does(any_uno, firmata_uno):
    """A real Uno resets when its port opens (DTR, through the reset capacitor), and so does the
    emulated one: a level the previous connection left goes through the reset when the next one
    opens the port, and the driver still connects within its handshake timeout (stock Firmata
    takes about 2.8 s to answer after a reset)."""
    await any_uno.setup_pin("D12", PinMode.OUTPUT)
    await any_uno.write("D12", True)
    firmata_uno.wait_edge("D12", 1)
    await any_uno.close()
    resets, before = len(firmata_uno.resets), len(firmata_uno.levels("D12"))
    second = ArduinoBoard("uno", str(firmata_uno.link), watchdog_ms=0)
    opened = time.monotonic()
    await second.connect()
    try:
        assert time.monotonic() - opened < second.handshake_timeout
        assert len(firmata_uno.resets) == resets + 1 and firmata_uno.resets[-1] > opened
        assert firmata_uno.levels("D12")[before:] == [0]  # released by the reset, not by the driver
        assert (await asyncio.to_thread(second._query_pin, 12))[1] == 0
    finally:
        await second.close()


async def test_behind_its_bootloader_each_open_restarts_the_sketch_through_optiboot(
        arduino_firmware, tmp_path):
    """The whole Uno: Optiboot at the top of the flash, our sketch below it. Each open resets the
    board into the bootloader (it blinks D13), which hands over to the sketch; the driver
    connects within its handshake timeout every time."""
    emulator, elf = arduino_firmware
    uno = SimAvr(emulator, elf, tmp_path, boot=OPTIBOOT)
    uno.start()
    try:
        for connection in range(2):
            board = ArduinoBoard("uno", str(uno.link), watchdog_ms=0)
            opened = time.monotonic()
            await board.connect()
            try:
                assert time.monotonic() - opened < board.handshake_timeout
                assert board.firmware == "EdgeFirmata 2.5" and board.has_watchdog
                assert len(uno.resets) == connection + 1
                assert any(pin == "D13" and at > uno.resets[-1] for pin, _, at in uno.edges)
            finally:
                await board.close()
    finally:
        uno.stop()
