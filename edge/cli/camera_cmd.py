"""``edge-cli camera`` (the configured cameras) and ``edge-cli camera snapshot NAME --output
FILE.jpg``: the picture is taken by the running agent, which owns its cameras (over its control
socket, ``camera.snapshot``), else here, directly.

    $ edge-cli camera snapshot door --output door.jpg
    wrote door.jpg (door, 14:02:11: 1280x720, 143 kB; 0.41 s)

An unknown camera is bad usage (exit 2); a camera that fails (not connected, busy, no picture
within its ``timeout_seconds``) exits 1 saying why.
"""

from __future__ import annotations

import argparse
import base64
from pathlib import Path
from typing import Any

from edge.cli.output import emit
from edge.control.ops import OpResult
from edge.core.exc import UsageError

ANSWER_SLACK_SECONDS = 10.0
"""Beyond the camera's own timeout and the agent's margin: how long the agent may take to
answer with the picture (base64 over the socket) before the command gives up on it."""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser],
             common: argparse.ArgumentParser) -> None:
    parser = sub.add_parser(
        "camera", parents=[common], help="the cameras, and a picture from one",
        description="The configured cameras ([cameras.NAME]); with snapshot, a picture from one\n"
        "(taken by the running agent, which owns its cameras, else here).",
        usage="%(prog)s\n       %(prog)s snapshot NAME --output FILE.jpg",
        epilog="examples:\n  edge-cli camera\n  edge-cli camera snapshot door --output door.jpg",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("action", nargs="?", choices=["snapshot"], help="snapshot: take a picture")
    parser.add_argument("name", nargs="?", help="the camera")
    parser.add_argument("-o", "--output", metavar="FILE.jpg", help="snapshot: the JPEG to write")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.node is not None:
        raise UsageError("pictures are taken where the camera is: run `edge-cli camera` on node "
                         f"{args.node}")
    if args.action is None:
        if args.name or args.output:
            raise UsageError("edge-cli camera lists the cameras; a picture is `edge-cli camera "
                             "snapshot NAME --output FILE.jpg`")
        return _list(args)
    if not args.name:
        raise UsageError("camera snapshot needs the camera: edge-cli camera snapshot NAME "
                         "--output FILE.jpg")
    if not args.output:
        raise UsageError("camera snapshot needs --output FILE.jpg: where to write the picture")
    return _snapshot(args)


def _list(args: argparse.Namespace) -> int:
    from edge.config.loader import load_config

    cameras = load_config(args.config).config.cameras
    rows = [{"name": name, "type": section.type, "width": section.width,
             "height": section.height, "rotation": section.rotation}
            for name, section in cameras.items()]
    text = "\n".join(f"{r['name']}: {r['type']} {r['width']}x{r['height']}"
                     f"{', turned ' + str(r['rotation']) + '°' if r['rotation'] else ''}"
                     for r in rows) or "no cameras configured; add a [cameras.NAME] section"
    return emit(OpResult(True, text, {"cameras": rows}), args.json)


def _direct(args: argparse.Namespace, op_args: dict[str, Any]) -> OpResult:
    """No agent: the camera taken here, as the agent would."""
    import asyncio

    from edge.cameras.service import CameraService
    from edge.config.loader import load_config
    from edge.core.exc import EdgeError

    cameras = CameraService(load_config(args.config).config.cameras)

    async def once() -> OpResult:
        try:
            shot = await cameras.snapshot(op_args["camera"])
        except UsageError as exc:
            return OpResult(False, str(exc), {"cameras": cameras.names}, exit_code=2)
        except EdgeError as exc:
            return OpResult(False, str(exc), exit_code=1)
        return OpResult(True, shot.caption(), {
            **shot.as_dict(), "jpeg_base64": base64.b64encode(shot.jpeg).decode("ascii")})

    return asyncio.run(once())


def _ask_agent(args: argparse.Namespace, op_args: dict[str, Any]) -> OpResult | None:
    """The running agent's answer over its control socket (waiting as long as the camera may
    take, and then some); None when no agent runs."""
    from edge.cameras.base import CameraOptions
    from edge.cameras.service import DEADLINE_MARGIN_SECONDS
    from edge.cli.oneshot import ask_agent
    from edge.config.locate import load_raw

    section = (load_raw(args.config).data.get("cameras") or {}).get(op_args["camera"])
    limit = section.get("timeout_seconds") if isinstance(section, dict) else None
    try:
        seconds = float(limit) if limit is not None else CameraOptions().timeout_seconds
    except (TypeError, ValueError):
        seconds = CameraOptions().timeout_seconds  # the agent's config check says what is wrong
    return ask_agent(args, "camera.snapshot", op_args,
                     timeout=seconds + DEADLINE_MARGIN_SECONDS + ANSWER_SLACK_SECONDS)


def _snapshot(args: argparse.Namespace) -> int:
    op_args = {"camera": args.name}
    asked = _ask_agent(args, op_args)
    result, via = (_direct(args, op_args), "direct") if asked is None else (asked, "daemon")
    jpeg = base64.b64decode(result.data.pop("jpeg_base64", "") or "") if result.ok else b""
    if result.ok:
        output = Path(args.output)
        try:
            output.write_bytes(jpeg)
        except OSError as exc:
            result = OpResult(False, f"cannot write the picture to {output}: "
                              f"{exc.strerror or exc}", result.data, exit_code=1)
        else:
            result.data["output"] = str(output)
            result.message = (f"wrote {output} ({result.message}; "
                              f"{result.data.get('seconds', 0):.2f} s)")
    return emit(result, args.json, via=via)
