from tests.emulation.fixtures import (  # noqa: F401
    arduino_firmware, qemu_stm32, simavr_uno, stm32_firmware)
