"""``edge-cli boards discover|list``: find boards on serial ports; show the configured ones."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from edge.cli.arguments import positive_seconds
from edge.cli.output import emit
from edge.control.ops import OpResult


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
    boards = sub.add_parser("boards", parents=[common], help="discover and list boards")
    bsub = boards.add_subparsers(dest="action", metavar="ACTION", required=True)
    discover = bsub.add_parser("discover", parents=[common],
                               help="list USB serial ports and confirm boards by handshake")
    discover.add_argument("--port", action="append", default=[], metavar="PORT",
                          help="also probe this port (a pty, socket://HOST:PORT); repeatable")
    discover.add_argument("--no-probe", action="store_true",
                          help="only list ports and USB ids; send nothing")
    discover.add_argument("--timeout", type=positive_seconds, default=2.5, metavar="SECONDS",
                          help="handshake wait per protocol (default 2.5; an Uno resets on open)")
    discover.set_defaults(handler=discover_boards)
    bsub.add_parser("list", parents=[common], help="configured boards and their state"
                    ).set_defaults(handler=list_boards)


def discover_boards(args: argparse.Namespace) -> int:
    import asyncio

    from peripherals.discovery import confirm, identify, usb_serial_ports

    found = usb_serial_ports() + [identify(port, None, None) for port in args.port]
    if not args.no_probe:
        async def probe_all() -> None:
            for item in found:
                await confirm(item, args.timeout)

        asyncio.run(probe_all())
    if args.json:
        confirmed = sum(bool(f.confirmed) for f in found)
        return emit(OpResult(True, f"{len(found)} port(s), {confirmed} board(s) confirmed",
                             {"ports": [f.as_dict() for f in found]}), True)
    if not found:
        print("no USB serial ports found; plug a board in, or probe one with --port PORT")
        return 0
    for item in found:
        ids = f"{item.vid:04x}:{item.pid:04x}" if item.vid is not None else "-"
        state = ("not probed" if args.no_probe else
                 f"{item.confirmed}: {item.detail}" if item.confirmed else
                 f"no handshake ({', '.join(item.tried)})")
        print(f"{item.port}  {ids}  {item.adapter}  {state}")
        if item.serial_number:
            print(f"    serial_number = \"{item.serial_number}\"")
        elif item.usb_path:
            print(f"    no USB serial number: name it by its socket, usb_path = \"{item.usb_path}\"")
    unconfirmed = [f for f in found if not f.confirmed and not args.no_probe]
    if unconfirmed:
        print("unconfirmed ports may run other firmware: `edge-cli firmware flash` puts ours on",
              file=sys.stderr)
    return 0


def list_boards(args: argparse.Namespace) -> int:
    from edge.config.locate import load_raw
    from edge.control import client
    from edge.core.exc import DaemonUnavailable
    from edge.core.paths import socket_candidates

    raw = load_raw(args.config)
    state_dir = (raw.data.get("paths") or {}).get("state_dir")
    try:
        reply = client.request(socket_candidates(state_dir if isinstance(state_dir, str) else None),
                               "status")
        boards, via = reply["data"]["boards"], "daemon"
    except DaemonUnavailable:
        boards, via = _probe_configured(args.config), "direct"
    for board in boards:
        note_firmware(board)
    if args.json:
        up = sum(bool(board["connected"]) for board in boards)
        return emit(OpResult(True, f"{len(boards)} board(s), {up} up", {"boards": boards}), True,
                    via=via)
    for board in boards:
        state = "up" if board["connected"] else "DOWN"
        print(f"{board['name']:<12} {board['kind']:<8} {state:<5} {board['detail']}")
        if board.get("firmware", {}).get("update"):
            firmware = board["firmware"]
            print(f"{'':<12} firmware {firmware['reported']}: {FIRMWARE_WORDS[firmware['verdict']]} "
                  f"{firmware['shipped']}; update it with `{firmware['update']}`")
    return 0


FIRMWARE_WORDS = {"stock": "stock firmware; ours is", "older": "older than ours,"}


def note_firmware(board: dict[str, Any]) -> None:
    """Add ``firmware`` (reported, shipped, verdict, update) to a connected Arduino or STM32's row."""
    from edge.cli.shipped_firmware import firmware_verdict

    if board["connected"] and "firmware" in board.get("info", {}):
        verdict = firmware_verdict(board["kind"], board["info"])
        if verdict:
            board["firmware"] = verdict


def _probe_configured(config_path: str | None) -> list[dict[str, Any]]:
    """No daemon: connect to each configured board in turn, report, release."""
    import asyncio

    from edge.config.loader import load_config
    from edge.hardware import build_hardware
    from peripherals.exc import BoardError

    hardware = build_hardware(load_config(config_path).config, resident=False)

    async def probe() -> list[dict[str, Any]]:
        rows = []
        for board in hardware.boards.values():
            try:
                await board.connect()
            except BoardError as exc:
                rows.append(board.status().as_dict() | {"connected": False, "detail": str(exc)})
                continue
            rows.append(board.status().as_dict())
            await board.close()
        return rows

    return asyncio.run(probe())
