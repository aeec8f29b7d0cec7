"""One-shot commands (status, pins, gpio): through the daemon's socket, else on the board directly."""

from __future__ import annotations

import getpass
import sys

from edge.cli.output import emit
from edge.config.locate import load_raw
from edge.control import client
from edge.control.ops import OpResult
from edge.exc import DaemonUnavailable
from edge.paths import socket_candidates
from edge.status import format_status


def register(sub, common) -> None:
    sub.add_parser("status", parents=[common], help="daemon, boards, channels and provider"
                   ).set_defaults(handler=run)
    sub.add_parser("pins", parents=[common], help="allowlisted pins, modes and states"
                   ).set_defaults(handler=run)
    gpio = sub.add_parser("gpio", parents=[common], help="read or drive a pin")
    gsub = gpio.add_subparsers(dest="action", metavar="ACTION", required=True)
    read = gsub.add_parser("read", parents=[common], help="read a pin")
    read.add_argument("pin", help="pin name or alias (led, GPIO17, BOARD11)")
    write = gsub.add_parser("write", parents=[common], help="switch an output pin on or off")
    write.add_argument("pin")
    write.add_argument("value", type=str.lower, choices=["on", "off"])
    pwm = gsub.add_parser("pwm", parents=[common], help="set a PWM pin's duty cycle")
    pwm.add_argument("pin")
    pwm.add_argument("duty", type=float, help="duty cycle 0..1")
    pwm.add_argument("--frequency", type=float, metavar="HZ", help="PWM frequency in Hz")
    gpio.set_defaults(handler=run)


def operation(args) -> tuple[str, dict]:
    if args.command == "gpio":
        if args.action == "read":
            return "gpio.read", {"pin": args.pin}
        if args.action == "write":
            return "gpio.write", {"pin": args.pin, "value": args.value}
        op_args = {"pin": args.pin, "duty": args.duty}
        if args.frequency is not None:
            op_args["frequency"] = args.frequency
        return "gpio.pwm", op_args
    return args.command, {}


def run_direct(config_path: str | None, op: str, op_args: dict) -> OpResult:
    """No daemon: build a one-shot runtime, run the operation, release the board."""
    import asyncio

    from edge.config.loader import load_config
    from edge.control.ops import run_op
    from edge.runtime import Runtime

    runtime = Runtime(load_config(config_path), resident=False)

    async def once() -> OpResult:
        await runtime.hardware.start()
        try:
            return await run_op(runtime, op, op_args, f"cli:{getpass.getuser()}")
        finally:
            await runtime.hardware.shutdown()

    return asyncio.run(once())


def run(args) -> int:
    op, op_args = operation(args)
    raw = load_raw(args.config)
    state_dir = (raw.data.get("paths") or {}).get("state_dir")
    paths = socket_candidates(state_dir if isinstance(state_dir, str) else None)
    try:
        result, via = OpResult.from_dict(client.request(paths, op, op_args)), "daemon"
    except DaemonUnavailable:
        result, via = run_direct(args.config, op, op_args), "direct"
        if not args.json and op != "status":
            print("edge-cli: no running agent; acted on the board directly", file=sys.stderr)
    render = format_status if op == "status" else None
    return emit(result, args.json, via=via, render=render)
