"""Building the firmwares from the test suite (make, once per session; make skips what is fresh)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIRMWARE = ROOT / "firmware"


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
