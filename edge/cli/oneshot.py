"""One-shot commands (status, pins, gpio): through the daemon's socket, else on the board directly.

A level set by a one-shot command must stay true after the command exits. Firmware on an Arduino
or STM32 keeps it; the Pi's header does not (the kernel promises nothing about a line once its
process exits), so with no agent running a write there is refused unless ``--hold SECONDS`` asks
this command to drive it for that long and then return it to its safe level. A signal (Ctrl-C,
SIGTERM, a dropped SSH session's SIGHUP, and every other one that would end the process, see
:mod:`edge.core.stopsignals`) ends the hold early, and the pin still goes safe; the command then
fails (``ok`` false, exit code 130) saying which signal cut the hold short, that the pin is back
at its safe level and what it reads.
"""

from __future__ import annotations

import argparse
import getpass
import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, NamedTuple

from edge.cli.agent_socket import ask_agent as ask_agent
from edge.cli.agent_socket import silent_agent
from edge.cli.arguments import seconds_up_to
from edge.cli.output import emit
from edge.cli.simulate_cmd import simulate
from edge.config.locate import load_raw
from edge.control import client
from edge.control.client import SocketForbidden
from edge.control.ops import OpResult
from edge.core.exc import DaemonUnavailable, UsageError
from edge.core.paths import socket_candidates
from edge.core.requester import Requester
from edge.core.stopsignals import STOPPING, catch, signal_name
from edge.status import format_status
from edge.status_lines import span

if TYPE_CHECKING:
    from pathlib import Path


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
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
    pwm.add_argument("duty", type=_duty, help="duty cycle 0..1 (0.5: half on)")
    pwm.add_argument("--frequency", type=_frequency, metavar="HZ",
                     help="PWM frequency in Hz (above 0, at most 100000)")
    servo = gsub.add_parser("servo", parents=[common], help="turn a servo on a PWM pin to an angle")
    servo.add_argument("pin")
    servo.add_argument("angle", type=_angle, help="degrees, 0 to 180")
    sim = gsub.add_parser("simulate", parents=[common],
                          help="make an input of a simulated board active (on) or not (off)")
    sim.add_argument("pin")
    sim.add_argument("value", type=str.lower, choices=["on", "off"])
    for parser in (write, pwm):
        parser.add_argument("--hold", type=seconds_up_to(MAX_HOLD_SECONDS), metavar="SECONDS",
                            help="keep the level this long, then return the pin to its safe "
                                 "level (needed on the Pi header when no agent is running)")
    gpio.set_defaults(handler=run)


def _number(text: str, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number ({what})") from None
    if value != value:  # NaN
        raise argparse.ArgumentTypeError(f"{text!r} is not a number ({what})")
    return value


def _duty(text: str) -> float:
    value = _number(text, "the duty cycle, 0 to 1")
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"duty {text} is outside 0..1 (0 off, 0.5 half on, 1 full)")
    return value


def _frequency(text: str) -> float:
    value = _number(text, "a frequency in Hz")
    if not 0.0 < value <= 100_000:
        raise argparse.ArgumentTypeError(f"frequency {text} Hz must be above 0 and at most 100000")
    return value


def _angle(text: str) -> float:
    value = _number(text, "an angle in degrees, 0 to 180")
    if not 0.0 <= value <= 180.0:
        raise argparse.ArgumentTypeError(f"angle {text} is outside 0..180 degrees")
    return value


MAX_HOLD_SECONDS = 86400.0
"""The longest ``--hold``: a day."""
BOARD_OPS = frozenset({"pins", "gpio.read", "gpio.write", "gpio.pwm", "gpio.servo", "gpio.safe"})
"""Operations on the pins: done without an agent, the user is told so."""


def operation(args: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    if args.command == "gpio":
        if args.action == "read":
            return "gpio.read", {"pin": args.pin}
        if args.action == "write":
            return "gpio.write", {"pin": args.pin, "value": args.value}
        if args.action == "servo":
            return "gpio.servo", {"pin": args.pin, "angle": args.angle}
        op_args = {"pin": args.pin, "duty": args.duty}
        if args.frequency is not None:
            op_args["frequency"] = args.frequency
        return "gpio.pwm", op_args
    return args.command, {}


HOLD_SIGNALS = STOPPING
"""From the write until the pin is back at its safe level, each of these only ends the hold."""
CUT_SHORT = 128 + signal.SIGINT
"""The exit code of a hold a signal ended early (130, as for Ctrl-C, whichever signal it was)."""
STATUS_NOT_RUNNING = 3
"""``edge-cli status`` with no agent running (the LSB code for "program is not running", as
``systemctl status`` uses): the status is still printed, and scripts can tell."""


class HoldStop:
    """The signal that ends a hold: while :meth:`catching`, one that would end the command is
    kept instead (the first), and the hold ends; one during the write ends it at once, one
    during the return to safe changes nothing."""

    def __init__(self) -> None:
        import asyncio  # here, not at the top: the client path stays light (tests/cli/test_lightweight)

        self.event = asyncio.Event()
        self.signum: int | None = None

    def _caught(self, signum: int) -> None:
        if self.signum is None:
            self.signum = signum
        self.event.set()

    @contextmanager
    def catching(self) -> Iterator[None]:
        import asyncio

        restore = catch(asyncio.get_running_loop(), HOLD_SIGNALS, self._caught)
        try:
            yield
        finally:
            restore()


class HoldEnd(NamedTuple):
    """How a hold ended: ``held`` the whole time, or cut short by ``signum`` after ``elapsed``."""

    seconds: float
    elapsed: float
    signum: int | None = None

    @property
    def held(self) -> bool:
        return self.signum is None


async def _hold(seconds: float, quiet: bool, stop: HoldStop) -> HoldEnd:
    """Wait ``seconds`` or until a signal ends the hold."""
    import asyncio

    if not quiet:
        print(f"edge-cli: holding for {seconds:g} s, then back to the safe level "
              "(Ctrl-C: now)", file=sys.stderr, flush=True)
    loop = asyncio.get_running_loop()
    began = loop.time()
    try:
        await asyncio.wait_for(stop.event.wait(), seconds)
    except TimeoutError:
        return HoldEnd(seconds, seconds)
    return HoldEnd(seconds, loop.time() - began, stop.signum)


def _restore_args(result: OpResult) -> dict[str, Any]:
    """The pin an op acted on, for ``gpio.safe`` (never rate-limited: a hold always ends)."""
    data = result.data
    return {"pin": f"{data['board']}:{data['pin']}"}


def _reads(pin: dict[str, Any]) -> str:
    """What a pin's ``value`` in a result reads, in words: ``off``, ``PWM duty 0.00``."""
    value = pin.get("value")
    if value is None:
        return "nothing the board could say"
    return f"PWM duty {value:.2f}" if pin.get("mode") == "pwm" else ("on" if value >= 0.5 else "off")


def _with_hold(result: OpResult, end: HoldEnd, restored: OpResult) -> OpResult:
    """The command's outcome: ok only when the whole hold was kept and the pin went back to its
    safe level; a hold a signal cut short fails with exit code 130 (:data:`CUT_SHORT`), saying
    which signal, that the pin is back at its safe level and what it reads."""
    signal_text = None if end.signum is None else signal_name(end.signum)
    data = {**result.data, "hold_seconds": end.seconds, "held": end.held, "signal": signal_text,
            "restored": restored.ok, "value_after": restored.data.get("value")}
    cut = "" if end.held else (f", but {signal_text} cut the {end.seconds:g} s hold short after "
                               f"{span(end.elapsed)}")
    if not restored.ok:
        return OpResult(False, f"{result.message}{cut}; returning it to its safe level failed: "
                        f"{restored.message}", data, 1)
    safe = result.data.get("safe") or "off"
    if end.held:
        return OpResult(True, f"{result.message}; held, then back to {safe}", data)
    return OpResult(False, f"{result.message}{cut}; it is back at its safe level ({safe}) and "
                    f"reads {_reads(restored.data)}", data, CUT_SHORT)


def run_direct(config_path: str | None, op: str, op_args: dict[str, Any],
               hold: float | None = None, quiet: bool = False) -> OpResult:
    """No daemon: build a one-shot runtime, run the operation (holding it when asked), release
    the board."""
    import asyncio

    from edge.config.loader import load_config
    from edge.control.ops import run_op
    from edge.core.logsetup import configure_from
    from edge.runtime import Runtime

    loaded = load_config(config_path)
    configure_from(loaded, stream=False)  # events go to the log file; the user gets one message
    runtime = Runtime(loaded, resident=False, hold_seconds=hold)
    requester = Requester("cli", getpass.getuser())

    async def once() -> OpResult:
        await runtime.hardware.start()
        try:
            # no agent: whoever may open the boards and the state directory is the operator
            if hold is None:
                return await run_op(runtime, op, op_args, requester, operator=True)
            stop = HoldStop()
            with stop.catching():
                result = await run_op(runtime, op, op_args, requester, operator=True)
                if not result.ok:
                    return result
                end = await _hold(hold, quiet, stop)
                restored = await run_op(runtime, "gpio.safe", _restore_args(result), requester)
            return _with_hold(result, end, restored)
        finally:
            await runtime.hardware.shutdown()

    return asyncio.run(once())


def _via_daemon(paths: list[Path], op: str, op_args: dict[str, Any], hold: float | None,
                quiet: bool) -> OpResult:
    if hold is None:
        return OpResult.from_dict(client.request(paths, op, op_args))
    import asyncio  # only for a hold: status and the like stay light (about 15 ms)

    return asyncio.run(_hold_via_daemon(paths, op, op_args, hold, quiet))


async def _hold_via_daemon(paths: list[Path], op: str, op_args: dict[str, Any], hold: float,
                           quiet: bool) -> OpResult:
    """The write, the hold and the return to safe, each asked of the agent. The requests block
    the loop (they are quick); a signal meanwhile is kept and ends the hold."""
    stop = HoldStop()
    with stop.catching():
        result = OpResult.from_dict(client.request(paths, op, op_args))
        if not result.ok:
            return result
        end = await _hold(hold, quiet, stop)
        try:
            restored = OpResult.from_dict(client.request(paths, "gpio.safe", _restore_args(result)))
        except DaemonUnavailable as exc:  # the agent stopped meanwhile: its shutdown made it safe
            restored = OpResult(False, f"the agent went away during the hold ({exc}); it drives "
                                "its outputs to their safe levels when it stops")
    return _with_hold(result, end, restored)


def run(args: argparse.Namespace) -> int:
    if args.command == "gpio" and args.action == "simulate":
        return simulate(args, "gpio.simulate", {"pin": args.pin, "value": args.value})
    op, op_args = operation(args)
    hold = args.hold if op in ("gpio.write", "gpio.pwm") else None
    if hold is not None and args.node is not None:
        raise UsageError(f"--hold cannot be kept through the broker (the command would have to "
                         f"stay alive on node {args.node}); use the pin's max_on_seconds there "
                         "(an auto-off), or run the command on that node")
    if hold is not None:  # the door refuses a hold the pin's max_on_seconds would cut short
        op_args["hold_seconds"] = hold
    code, _ = perform(args, op, op_args, hold=hold,
                      render=format_status if op == "status" else None)
    return code


def _via_node(args: argparse.Namespace, op: str, op_args: dict[str, Any]) -> OpResult:
    """``op`` on node ``args.node``, asked through the broker of this config's ``[mqtt]``."""
    from edge.cli.fleet_cmd import on_broker
    from edge.config.loader import load_config
    from edge.core.paths import state_dir
    from edge.fleet.keys import FleetKeys
    from edge.fleet.remote import ask

    config = load_config(args.config).config
    keys = FleetKeys.of(config.mqtt.fleet_keys, state_dir(config.paths.state_dir))
    return on_broker(args, lambda cfg, broker: ask(
        broker, args.node, op, op_args, keys=keys, me=cfg.node_id,
        allow_unauthenticated=cfg.allow_unauthenticated))


def _status_outcome(result: OpResult) -> OpResult:
    """``status`` with no agent running: still the status, but not ok and exit code 3, in the
    JSON as in the process's exit."""
    if result.ok and not result.data.get("daemon", {}).get("running"):
        return OpResult(False, "no agent is running; start it with `edge-cli run` or `sudo "
                        "systemctl start edge-agent`", result.data, STATUS_NOT_RUNNING)
    return result


def perform(args: argparse.Namespace, op: str, op_args: dict[str, Any], *,
            hold: float | None = None, render: Callable[[dict[str, Any]], str] | None = None) -> tuple[int, OpResult]:
    """Run ``op`` through the daemon when one is running, else directly on the boards (never
    behind the back of an agent that holds them), or with ``--node NAME`` on that node through
    the broker; print the outcome. The exit code and the result."""
    if args.node is not None:
        result = _via_node(args, op, op_args)
        if op == "status" and result.data:
            result = _status_outcome(result)
        return emit(result, args.json, via="broker", render=render), result
    raw = load_raw(args.config)
    state_dir = (raw.data.get("paths") or {}).get("state_dir")
    configured = state_dir if isinstance(state_dir, str) else None
    paths = socket_candidates(configured)
    try:
        result, via = _via_daemon(paths, op, op_args, hold, args.json), "daemon"
    except SocketForbidden as exc:
        result, via = OpResult(False, str(exc), exit_code=1), "daemon"
    except DaemonUnavailable:
        silent = silent_agent(configured)
        if silent is not None:  # it owns the boards: never open them behind its back
            return emit(silent, args.json, via="daemon"), silent
        result, via = run_direct(args.config, op, op_args, hold, args.json), "direct"
        if not args.json and op in BOARD_OPS and result.ok:
            print("edge-cli: no running agent; acted on the board directly", file=sys.stderr)
    if op == "status":
        result = _status_outcome(result)
    return emit(result, args.json, via=via, render=render), result
