"""A stand-in ``rpicam-still`` on PATH: it takes the documented options of rpicam-apps' still
program (and nothing else: an unknown option ends it with exit 2, as the real one refuses it),
records each command line, and writes a real JPEG of the asked size: red above, blue below, as
a camera looking at a red wall over a blue floor; ``--rotation 180`` turns it, as libcamera
would. ``mode`` makes it fail as with no camera connected, hang, or take 11 s."""

from __future__ import annotations

import json
import sys
from pathlib import Path

RED, BLUE = (220, 20, 20), (20, 20, 220)

SCRIPT = '''#!{python}
import argparse, json, os, sys, time
from PIL import Image

parser = argparse.ArgumentParser(prog="rpicam-still", add_help=False)
parser.add_argument("-n", "--nopreview", action="store_true")
parser.add_argument("--camera", type=int, default=0)
parser.add_argument("-t", "--timeout", type=int, default=5000)
parser.add_argument("--width", type=int, required=True)
parser.add_argument("--height", type=int, required=True)
parser.add_argument("--rotation", type=int, choices=[0, 180], default=0)
parser.add_argument("-q", "--quality", type=int, default=93)
parser.add_argument("-e", "--encoding", choices=["jpg", "png", "bmp", "rgb", "yuv420"], default="jpg")
parser.add_argument("-o", "--output", required=True)
args = parser.parse_args()
with open({log!r}, "a") as log:
    log.write(json.dumps({{"argv": sys.argv[1:], "pid": os.getpid(), "ppid": os.getppid()}}) + "\\n")
if {mode!r} == "fail":
    print("ERROR: *** no cameras available ***", file=sys.stderr)
    sys.exit(255)
if {mode!r} == "hang":
    time.sleep(120)
if {mode!r} == "slow":  # a camera that takes its time, but answers
    time.sleep(11)
picture = Image.new("RGB", (args.width, args.height), {blue})
picture.paste({red}, (0, 0, args.width, args.height // 2))
if args.rotation == 180:
    picture = picture.rotate(180)
picture.save(args.output, "JPEG", quality=args.quality)
'''


def install(directory: Path, mode: str = "picture", name: str = "rpicam-still") -> Path:
    """Write the stand-in as ``directory/name``; returns the file its command lines go to (one
    JSON object a line: ``argv``, ``pid``, ``ppid``)."""
    directory.mkdir(parents=True, exist_ok=True)
    log = directory / f"{name}.calls"
    program = directory / name
    program.write_text(SCRIPT.format(python=sys.executable, log=str(log), mode=mode,
                                     red=RED, blue=BLUE))
    program.chmod(0o755)
    return log


def calls(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def near(color: tuple[int, ...], expected: tuple[int, int, int], slack: int = 40) -> bool:
    return all(abs(a - b) <= slack for a, b in zip(color[:3], expected, strict=True))
