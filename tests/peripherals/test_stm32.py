"""The stm32 board driver against the real firmware in qemu (netduinoplus2)."""

from __future__ import annotations

import asyncio

import pytest

from peripherals.base import PinMode
from peripherals.exc import BoardUnavailable, PinModeError, UnknownPin
from peripherals.stm32 import FirmwareError, Stm32Board

pytestmark = pytest.mark.emulator


def test_pin_names_and_aliases_resolve_before_connecting():
    board = Stm32Board("st", "socket://127.0.0.1:1", aliases={"led": "pa5"})
    assert board.resolve("led") == "PA5"
    assert board.resolve(" pc13 ") == "PC13"
    for bad in ("PZ1", "PA16", "A5", "GPIO17"):
        with pytest.raises(UnknownPin):
            board.resolve(bad)


async def test_handshake_reports_board_and_pins(qemu_stm32):
    board = Stm32Board("st", qemu_stm32.url)
    await board.connect()
    try:
        assert board.connected
        assert "netduinoplus2-f405, firmware 1.0, protocol 1" in board.status().detail
        caps = {p.name: p.modes for p in board.capabilities()}
        assert PinMode.PWM in caps["PA5"] and PinMode.ANALOG in caps["PA0"]
        assert caps["PC13"] == frozenset({PinMode.INPUT})
        with pytest.raises(UnknownPin, match="not available"):
            board.resolve("PD2")
    finally:
        await board.close()


async def test_write_reaches_the_gpio_register(qemu_stm32):
    board = Stm32Board("st", qemu_stm32.url, aliases={"led": "PA5"})
    await board.connect()
    try:
        await board.setup_pin("led", PinMode.OUTPUT)
        await board.write("led", True)
        qemu_stm32.wait_level("PA5", 1)
        assert await board.read("led") == 1.0
        await board.write("led", False)
        assert qemu_stm32.wait_level("PA5", 0, after=qemu_stm32.pin_writes("PA5").index(1))
    finally:
        await board.close()


async def test_firmware_refusals_are_clear_errors(qemu_stm32):
    board = Stm32Board("st", qemu_stm32.url)
    await board.connect()
    try:
        with pytest.raises(PinModeError, match="cannot be output"):
            await board.setup_pin("PC13", PinMode.OUTPUT)
        with pytest.raises(PinModeError, match="not set up"):
            await board.write("PA6", True)
        with pytest.raises(FirmwareError, match="WRONG_MODE"):
            board._modes["PA6"] = (PinMode.OUTPUT, None)  # host and firmware disagree
            await board.write("PA6", True)
    finally:
        await board.close()


async def test_pwm_and_adc(qemu_stm32):
    board = Stm32Board("st", qemu_stm32.url)
    await board.connect()
    try:
        await board.setup_pin("PA1", PinMode.PWM)
        await board.pwm("PA1", 0.25, 2000)
        assert await board.read("PA1") == 0.25
        await board.setup_pin("PA0", PinMode.ANALOG)
        assert 0.0 <= await board.read("PA0") <= 1.0
    finally:
        await board.close()


async def test_garbage_on_the_line_is_counted_and_survived(qemu_stm32):
    board = Stm32Board("st", qemu_stm32.url)
    await board.connect()
    try:
        before = await board.stats()
        board._link.write(b"\x13\x37garbage\x00\x02\x01\x00")
        await board.setup_pin("PA5", PinMode.OUTPUT)
        after = await board.stats()
        assert after["bad_frames"] == before["bad_frames"] + 2
    finally:
        await board.close()


async def test_firmware_watchdog_drives_safe_values_when_the_host_goes_silent(qemu_stm32):
    board = Stm32Board("st", qemu_stm32.url, watchdog_ms=600)
    events = []
    board.subscribe(events.append)
    await board.connect()
    await board.setup_pin("PA5", PinMode.OUTPUT)
    await board.declare_safe_state({"PA5": False})
    await board.write("PA5", True)
    qemu_stm32.wait_level("PA5", 1)
    await asyncio.sleep(0.8)  # keep-alive pings hold the watchdog off
    assert qemu_stm32.pin_writes("PA5")[-1] == 1
    board._generation += 1  # the host falls silent (as if hung) without closing
    writes = qemu_stm32.wait_level("PA5", 0, timeout=5, after=len(qemu_stm32.pin_writes("PA5")))
    assert writes[-1] == 0
    await asyncio.sleep(0.05)
    assert [e.kind for e in events if e.kind == "watchdog"] == ["watchdog"]
    await board.close()


async def test_lost_emulator_is_down_at_once_and_reconnect_restores_state(qemu_stm32):
    board = Stm32Board("st", qemu_stm32.url)
    events = []
    board.subscribe(events.append)
    await board.connect()
    await board.setup_pin("PA5", PinMode.OUTPUT)
    await board.write("PA5", True)
    qemu_stm32.stop()
    for _ in range(100):
        if not board.connected:
            break
        await asyncio.sleep(0.02)
    assert not board.connected
    with pytest.raises(BoardUnavailable, match="down"):
        await board.write("PA5", False)
    qemu_stm32.start()
    await board.connect()
    qemu_stm32.wait_level("PA5", 1)  # pin mode and level re-applied on the new firmware
    assert [e.kind for e in events] == ["up", "down", "up"]
    await board.close()


async def test_adopting_an_output_keeps_its_level(qemu_stm32):
    """What a one-shot command sees: a new connection adopts PA5 at the level the last one left
    (reads 1) without writing it low; a pin never set up since the board started is set up."""
    first = Stm32Board("st", qemu_stm32.url, watchdog_ms=0)
    await first.connect()
    await first.setup_pin("PA5", PinMode.OUTPUT)
    await first.write("PA5", True)
    await first.close()
    writes = qemu_stm32.wait_level("PA5", 1)
    second = Stm32Board("st", qemu_stm32.url, watchdog_ms=0)
    await second.connect()
    try:
        await second.adopt_pin("PA5", PinMode.OUTPUT)
        assert await second.read("PA5") == 1.0
        await second.adopt_pin("PA6", PinMode.OUTPUT)
        assert await second.read("PA6") == 0.0
        await asyncio.sleep(0.1)
        assert 0 not in qemu_stm32.pin_writes("PA5")[len(writes):]
    finally:
        await second.close()
