"""Emulator fixtures: each test gets its own emulator process, killed in teardown."""

from __future__ import annotations

import pytest

from tests.emulation.build import stm32_elf
from tests.emulation.qemu import QemuStm32


@pytest.fixture(scope="session")
def stm32_firmware():
    return stm32_elf("netduinoplus2")


@pytest.fixture
def qemu_stm32(stm32_firmware, tmp_path):
    emulator = QemuStm32(stm32_firmware, tmp_path)
    emulator.start()
    yield emulator
    emulator.stop()
