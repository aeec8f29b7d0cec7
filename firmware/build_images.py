"""Build the firmware images the package ships (``edge/firmware_images/``) and write their manifest.

    python firmware/build_images.py           build every board, copy the images, write manifest.json
    python firmware/build_images.py --check   fail when a shipped image is stale (its sources changed)
                                              or is not what the sources build today

The Uno's image is ``firmware/arduino`` built with avr-gcc, each STM32 board's is ``firmware/stm32``
built with arm-none-eabi-gcc (the toolchains of deploy/test-packages.txt). Each manifest entry
records the board, the file, the firmware version and protocol the board's handshake reports, the
image's sha256 and the sha256 of the sources it was built from, so an installed agent can flash
without make or a compiler, and a test can tell a stale image from a fresh one.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

FIRMWARE = Path(__file__).resolve().parent
SHIPPED = FIRMWARE.parent / "edge" / "firmware_images"
STM32_BOARDS = ("netduinoplus2", "nucleo_f401re", "nucleo_f411re", "blackpill_f411")
REBUILD = "python firmware/build_images.py"


def source_hash(directory: Path) -> str:
    """sha256 over every source file's path and bytes (build output and host-side checkers
    excluded), in path order."""
    digest = hashlib.sha256()
    for path in sorted(directory.rglob("*")):
        relative = path.relative_to(directory)
        if not path.is_file() or relative.parts[0] in ("build", "host"):
            continue
        digest.update(str(relative).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def define(header: Path, name: str) -> int:
    found = re.search(rf"#define\s+{name}\s+(\d+)", header.read_text())
    assert found, f"{name} is not defined in {header}"
    return int(found.group(1))


def versions(board: str) -> tuple[str, str]:
    """(firmware version, protocol) as the board's handshake reports them."""
    if board == "uno":
        sketch = FIRMWARE / "arduino" / "edge_firmata" / "edge_firmata.ino"
        found = re.search(r"FW_MAJOR = (\d+), FW_MINOR = (\d+);", sketch.read_text())
        assert found, f"FW_MAJOR and FW_MINOR are not declared in {sketch}"
        major, minor = found.groups()
        return f"EdgeFirmata {major}.{minor}", f"firmata {major}.{minor}"
    proto = FIRMWARE / "stm32" / "core" / "proto.h"
    return (f"{define(proto, 'FW_MAJOR')}.{define(proto, 'FW_MINOR')}",
            f"edge-agent {define(proto, 'PROTO_VERSION')}")


def make(directory: Path, *args: str) -> None:
    done = subprocess.run(["make", "--no-print-directory", "-C", str(directory), *args],
                          capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"make {' '.join(args)} in {directory} failed:\n{done.stdout}{done.stderr}")


def build(board: str, into: Path) -> Path:
    """Build ``board``'s image from scratch under ``into``; return the image."""
    if board == "uno":
        make(FIRMWARE / "arduino", f"BUILD={into / 'uno'}")
        return into / "uno" / "edge_firmata.hex"
    make(FIRMWARE / "stm32", f"BOARD={board}", f"BUILD={into}")
    return into / board / "firmware.bin"


def shipped_name(board: str) -> str:
    return "edge_firmata-uno.hex" if board == "uno" else f"edge-{board}.bin"


def entry(board: str, image: Path) -> dict[str, str]:
    firmware, protocol = versions(board)
    return {"board": board, "file": shipped_name(board), "firmware": firmware, "protocol": protocol,
            "sha256": hashlib.sha256(image.read_bytes()).hexdigest(),
            "source_sha256": source_hash(FIRMWARE / ("arduino" if board == "uno" else "stm32"))}


def build_all(scratch: Path) -> list[tuple[dict[str, str], Path]]:
    built = []
    for board in ("uno", *STM32_BOARDS):
        image = build(board, scratch)
        built.append((entry(board, image), image))
    return built


def write(built: list[tuple[dict[str, str], Path]]) -> None:
    SHIPPED.mkdir(exist_ok=True)
    for item, image in built:
        shutil.copyfile(image, SHIPPED / item["file"])
    manifest = {"rebuild": REBUILD, "images": [item for item, _ in built]}
    (SHIPPED / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")


def check(built: list[tuple[dict[str, str], Path]]) -> list[str]:
    """What is stale about the shipped images, each with the command that fixes it."""
    shipped = {i["board"]: i for i in json.loads((SHIPPED / "manifest.json").read_text())["images"]}
    problems = []
    for item, _ in built:
        old = shipped.get(item["board"])
        if old is None:
            problems.append(f"{item['board']}: no shipped image")
        elif old != item:
            fields = [k for k in item if old.get(k) != item[k]]
            problems.append(f"{item['board']}: {', '.join(fields)} differ from a build of today's sources")
        elif hashlib.sha256((SHIPPED / old["file"]).read_bytes()).hexdigest() != old["sha256"]:
            problems.append(f"{item['board']}: {old['file']} does not match its manifest sha256")
    return [f"{p}; run `{REBUILD}` and commit edge/firmware_images/" for p in problems]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="edge-images-") as scratch:
        built = build_all(Path(scratch))
        if args.check:
            problems = check(built)
            print("\n".join(problems) or "shipped firmware images match their sources")
            return 1 if problems else 0
        write(built)
    print(f"wrote {len(built)} images and manifest.json to {SHIPPED}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
