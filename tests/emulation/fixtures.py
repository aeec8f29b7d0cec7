"""Emulator fixtures: each test gets its own emulator process, killed in teardown."""

from __future__ import annotations

import pytest

from tests.emulation.build import arduino_elf, avr_emulator, stm32_elf, stock_firmata_hex
from tests.emulation.qemu import QemuStm32
from tests.emulation.simavr import SimAvr


@pytest.fixture(scope="session")
def stm32_firmware():
    return stm32_elf("netduinoplus2")


@pytest.fixture
def qemu_stm32(stm32_firmware, tmp_path):
    emulator = QemuStm32(stm32_firmware, tmp_path)
    emulator.start()
    yield emulator
    emulator.stop()


@pytest.fixture(scope="session")
def arduino_firmware():
    return avr_emulator(), arduino_elf()


@pytest.fixture
def simavr_uno(arduino_firmware, tmp_path):
    emulator_bin, elf = arduino_firmware
    emulator = SimAvr(emulator_bin, elf, tmp_path)
    emulator.start()
    yield emulator
    emulator.stop()


FIRMATA_SKETCHES = ("edge", "stock")
"""Our sketch (EdgeFirmata, with the watchdog extension) and stock StandardFirmata."""


@pytest.fixture(scope="session")
def stock_firmata():
    return stock_firmata_hex()


@pytest.fixture
def stock_simavr_uno(arduino_firmware, stock_firmata, tmp_path):
    """An Uno in simavr running stock StandardFirmata only."""
    emulator_bin, _ = arduino_firmware
    emulator = SimAvr(emulator_bin, stock_firmata, tmp_path)
    emulator.sketch = "stock"
    emulator.start()
    yield emulator
    emulator.stop()


@pytest.fixture(params=FIRMATA_SKETCHES)
def firmata_uno(request, arduino_firmware, tmp_path):
    """An Uno in simavr running each Firmata sketch in turn; ``.sketch`` says which."""
    emulator_bin, elf = arduino_firmware
    firmware = request.getfixturevalue("stock_firmata") if request.param == "stock" else elf
    emulator = SimAvr(emulator_bin, firmware, tmp_path)
    emulator.sketch = request.param
    emulator.start()
    yield emulator
    emulator.stop()
