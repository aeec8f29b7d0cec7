"""``edge-cli firmware build|flash``: build our firmwares (make) and put them on a board.

``flash`` uploads the image this package ships (``edge/firmware_images``, see
:mod:`edge.cli.shipped_firmware`), so an installed agent needs only the flashing tool; ``--build``
builds from a checkout's sources first. A running agent is asked to lend the board out
(``boards.release``: outputs safe, port closed) and given it back afterwards
(``boards.reattach``), whose handshake says what the board now runs.

Flashing uses avrdude's ``arduino`` programmer (the Uno's Optiboot bootloader) for Arduino
boards, and stm32flash (the STM32's UART bootloader) or st-flash (an ST-Link) for STM32 boards.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from edge.cli.arguments import whole_number
from edge.cli.output import emit
from edge.control.ops import OpResult
from edge.core.exc import EXIT_FAILED, EdgeError, UsageError

STM32_BOARDS = ("netduinoplus2", "nucleo_f401re", "nucleo_f411re", "blackpill_f411")
AVR_SIZE = re.compile(r"^(flash|ram) (\d+) of (\d+) bytes \(([\d.]+)%\)", re.M)
AVRDUDE_PHASE = re.compile(r"(Reading|Writing) \|")
STM32FLASH_PROGRESS = re.compile(r"\((\d+(?:\.\d+)?)%\)")


def source_dir(given: str | None) -> Path:
    """The firmware sources: a wrong ``--source`` is bad usage (exit 2); an installation that
    ships none cannot build (exit 1)."""
    path = Path(given) if given else Path(__file__).resolve().parents[2] / "firmware"
    if not (path / "arduino" / "Makefile").exists():
        error = UsageError if given else EdgeError
        raise error(f"no firmware sources at {path}; run from a git checkout of edge-agent "
                    "or pass --source DIR")
    return path


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
    fw = sub.add_parser("firmware", parents=[common], help="build and flash board firmware")
    fsub = fw.add_subparsers(dest="action", metavar="ACTION", required=True)
    build = fsub.add_parser("build", parents=[common], help="build a firmware and print its size")
    build.add_argument("target", choices=["arduino", "stm32"])
    build.add_argument("--board", choices=STM32_BOARDS, default="nucleo_f401re",
                       help="STM32 board (default nucleo_f401re)")
    build.add_argument("--source", metavar="DIR", help="firmware source directory")
    build.set_defaults(handler=build_firmware)
    flash = fsub.add_parser("flash", parents=[common], help="upload a firmware to a board")
    flash.add_argument("target", help="arduino, stm32, or a configured board's name")
    flash.add_argument("--port", help="serial port (default: the configured board's port)")
    flash.add_argument("--board", choices=STM32_BOARDS, default="nucleo_f401re")
    flash.add_argument("--tool", choices=["avrdude", "stm32flash", "st-flash"],
                       help="flashing tool (default: avrdude for arduino, stm32flash for stm32, "
                            "st-flash when no port is given)")
    flash.add_argument("--baud", type=whole_number(at_least=1), default=115200, help="bootloader baud rate")
    flash.add_argument("--image", metavar="FILE", help="upload this file instead of the shipped image")
    flash.add_argument("--build", action="store_true",
                       help="build from the firmware sources (a checkout) instead of the shipped image")
    flash.add_argument("--source", metavar="DIR", help="firmware source directory (with --build)")
    flash.set_defaults(handler=flash_firmware)


def make(directory: Path, *args: str) -> str:
    if not shutil.which("make"):
        raise EdgeError("make is not installed: sudo apt-get install make")
    done = subprocess.run(["make", "-C", str(directory), *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise EdgeError(f"build failed in {directory}:\n{done.stdout[-2000:]}{done.stderr[-2000:]}\n"
                        "the toolchains come from deploy/test-packages.txt (gcc-avr, avr-libc, "
                        "arduino-core-avr, gcc-arm-none-eabi)")
    return done.stdout


def build(target: str, board: str, source: Path) -> dict[str, Any]:
    if target == "arduino":
        out = make(source / "arduino")
        sizes = {m[0]: {"bytes": int(m[1]), "of": int(m[2]), "percent": float(m[3])}
                 for m in AVR_SIZE.findall(out)}
        image = source / "arduino" / "build" / "edge_firmata.hex"
        return {"target": target, "image": str(image), "flash": sizes["flash"], "ram": sizes["ram"]}
    make(source / "stm32", f"BOARD={board}")
    image = source / "stm32" / "build" / board / "firmware.bin"
    table = subprocess.run(["arm-none-eabi-size", str(image.with_suffix(".elf"))],
                           capture_output=True, text=True, check=True).stdout
    text, data, bss = (int(x) for x in table.splitlines()[1].split()[:3])
    return {"target": target, "board": board, "image": str(image),
            "flash": {"bytes": text + data}, "ram": {"bytes": data + bss}}


def build_firmware(args: argparse.Namespace) -> int:
    result = build(args.target, args.board, source_dir(args.source))
    if args.json:
        return emit(OpResult(True, f"built {result['image']}", result), True)
    flash, ram = result["flash"], result["ram"]

    def extra(s: dict[str, Any]) -> str:
        return f" of {s['of']} ({s['percent']:.1f}%)" if "of" in s else ""

    print(f"built {result['image']}\nflash {flash['bytes']} bytes{extra(flash)}\n"
          f"ram   {ram['bytes']} bytes{extra(ram)}")
    return 0


def resolve_target(args: argparse.Namespace) -> tuple[str, str | None]:
    """(arduino|stm32, port) from the argument, or from a configured board of that name."""
    if args.target in ("arduino", "stm32"):
        return args.target, args.port
    from edge.config.loader import load_config
    from peripherals.board_types import SerialBoardOptions

    boards = load_config(args.config).config.boards
    section = boards.get(args.target)
    if not isinstance(section, SerialBoardOptions) or section.type not in ("arduino", "stm32"):
        raise UsageError(f"{args.target!r} is neither arduino, stm32 nor a configured serial "
                         f"board (configured: {', '.join(boards) or 'none'})")
    return section.type, args.port or section.port


def flash_command(kind: str, tool: str, port: str | None, image: str, baud: int) -> list[str]:
    if tool in ("avrdude", "stm32flash") and not port:
        raise UsageError(f"{tool} needs a serial port: pass --port /dev/ttyACM0 (or the board's "
                         "port in config)")
    assert port is not None
    if tool == "avrdude":
        return ["avrdude", "-p", "atmega328p", "-c", "arduino", "-P", port, "-b", str(baud), "-D",
                "-U", f"flash:w:{image}:i"]
    if tool == "stm32flash":
        return ["stm32flash", "-b", str(baud), "-w", image, "-v", "-g", "0x08000000", port]
    return ["st-flash", "--reset", "write", image, "0x08000000"]


class ProgressBar:
    """Turns a flashing tool's output into one bar line (or nothing, for --json)."""

    def __init__(self, enabled: bool):
        self.enabled = enabled
        self.phase, self.hashes, self.counting, self.recent = "", 0, False, ""

    def feed(self, text: str) -> None:
        for char in text:  # avrdude: "Writing | ####...# | 100% 0.42s", one '#' per 2%
            self.recent = (self.recent + char)[-10:]
            phase = AVRDUDE_PHASE.search(self.recent)
            if phase and char == "|":
                if self.phase and self.enabled:
                    sys.stderr.write("\n")
                self.phase, self.hashes, self.counting, self.recent = phase.group(1).lower(), 0, True, ""
            elif self.counting and char == "#":
                self.hashes += 1
                self.show(min(100.0, self.hashes * 2.0))
            elif self.counting and char == "|":
                self.counting = False
        for percent in STM32FLASH_PROGRESS.findall(text):  # "Wrote address 0x08000100 (8.33%)"
            self.phase = "writing"
            self.show(float(percent))

    def show(self, percent: float) -> None:
        if self.enabled:
            filled = int(percent / 5)
            sys.stderr.write(f"\r{self.phase:<8} [{'#' * filled}{'.' * (20 - filled)}] {percent:5.1f}%")
            sys.stderr.flush()

    def done(self) -> None:
        if self.enabled and self.phase:
            sys.stderr.write("\n")


def image_to_flash(args: argparse.Namespace, kind: str) -> tuple[str, str | None]:
    """(the image file, what its handshake will report when known: ``EdgeFirmata 2.5``, an
    STM32's board and version ``nucleo_f401re 1.0``)."""
    if args.image:
        return args.image, None
    if args.build:
        return build(kind, args.board, source_dir(args.source))["image"], None
    from edge.cli.shipped_firmware import shipped_image  # here: the parser's path stays light

    shipped = shipped_image("uno" if kind == "arduino" else args.board)
    return str(shipped.verified()), (shipped.firmware if kind == "arduino"
                                     else f"{args.board} {shipped.firmware}")


def run_tool(command: list[str], show_progress: bool) -> tuple[int, str]:
    """Run the flashing tool, its progress as one bar; (exit status, its output)."""
    bar = ProgressBar(enabled=show_progress)
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    log = bytearray()
    assert proc.stdout is not None  # stdout=PIPE
    while chunk := proc.stdout.read1(256):  # type: ignore[attr-defined]  # a BufferedReader
        log += chunk
        bar.feed(chunk.decode(errors="replace"))
    code = proc.wait()
    bar.done()
    return code, log.decode(errors="replace")


def flash_firmware(args: argparse.Namespace) -> int:
    from edge.cli.flash_sequence import BoardLoan, described, handshake  # asyncio: only to flash

    kind, port = resolve_target(args)
    tool = args.tool or ("avrdude" if kind == "arduino" else "stm32flash" if port else "st-flash")
    if tool != "st-flash" and not port:
        raise UsageError("give the serial port with --port PORT (see `edge-cli boards discover`)")
    if not shutil.which(tool):
        package = {"avrdude": "avrdude", "stm32flash": "stm32flash", "st-flash": "stlink-tools"}[tool]
        raise EdgeError(f"{tool} is not installed: sudo apt-get install {package}")
    image, expected = image_to_flash(args, kind)
    command = flash_command(kind, tool, port, image, args.baud)
    lent = BoardLoan(args, args.target if args.target not in ("arduino", "stm32") else port)
    refused = lent.release()
    if refused is not None:
        return emit(refused, args.json)
    try:
        code, log = run_tool(command, show_progress=not args.json)
    finally:
        back = lent.reattach()
    result: dict[str, Any] = {"target": kind, "tool": tool, "port": port, "image": image,
                              "exit_status": code, "agent": lent.board}
    if code != 0:
        return emit(OpResult(False, f"{tool} failed (exit {code}):\n{log[-2000:]}", result,
                             EXIT_FAILED), args.json)
    reported = described(kind, back if lent.board else handshake(kind, port))
    result |= {"firmware": reported, "expected": expected}
    where = port or "the ST-Link"
    if reported is not None and expected is not None and reported != expected:
        return emit(OpResult(False, f"flashed {image} to {where}, but the board now reports "
                             f"{reported!r}, not {expected!r}: check the board type (--board), "
                             "then flash again", result, EXIT_FAILED), args.json)
    said = f"; the board reports {reported}" if reported else ""
    given = f"; given back to the agent as {lent.board}" if lent.board else ""
    return emit(OpResult(True, f"flashed {image} to {where} with {tool}{said}{given}", result),
                args.json)
