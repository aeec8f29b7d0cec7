from tests.emulation.fixtures import qemu_stm32, stm32_firmware  # noqa: F401
