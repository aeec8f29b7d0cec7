"""``edge-cli sensors``, ``edge-cli rules`` and ``edge-cli schedules``: through the running agent
when there is one (its live readings, what its rules did, when its jobs run next), else from the
config (sensors are read directly; rules and schedules are listed as configured).

Input that could never work is bad usage, exit 2, before anything is asked (``--json``: ``ok``
false, ``error``, ``exit_code`` 2): an unknown sensor, a job with a bad cron, zone, time, name or
action, an action on a pin the boards do not have or the policy forbids, a name that is taken,
removing a job that does not exist or lives in the config file. Checks that need the config or
the state directory are made when this user can read them; the agent checks everything again.
"""

from __future__ import annotations

import argparse
from argparse import ArgumentTypeError, RawDescriptionHelpFormatter
from typing import TYPE_CHECKING, Any

from edge.cli.arguments import whole_number
from edge.cli.oneshot import perform
from edge.core.exc import EdgeError, UsageError

if TYPE_CHECKING:
    from edge.config.loader import LoadedConfig
    from edge.config.schedules import ScheduleConfig

HISTORY_WORDS = ("history", "chart")
"""``edge-cli sensors history|chart NAME``: words, never sensor names (the config refuses them,
as it refuses ``simulate``)."""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
    sensors = sub.add_parser(
        "sensors", parents=[common], help="sensor readings, their history and charts",
        description="The configured sensors and their last readings; with history, what one\n"
        "read over a span of time (from the agent's sensor history); with chart, that history\n"
        "drawn as a PNG. history and chart are words here, never sensor names (the config\n"
        "refuses a sensor called so).",
        usage="%(prog)s [NAME] [--fresh]\n"
              "       %(prog)s history NAME [QUANTITY] [--since 24h] [--until WHEN] [--points N] "
              "[--json | --csv]\n"
              "       %(prog)s chart NAME [QUANTITY] [--since 24h] [--until WHEN] [--track OUTPUT]... "
              "--output FILE.png",
        epilog="examples:\n  edge-cli sensors greenhouse --fresh\n"
        "  edge-cli sensors history greenhouse temperature --since 12h\n"
        "  edge-cli sensors history greenhouse --since 2026-11-25T18:00 --csv > night.csv\n"
        "  edge-cli sensors chart greenhouse temperature --since 7d --output week.png\n"
        "  edge-cli sensors chart greenhouse --track fan --track pump --output day.png\n"
        "  edge-cli sensors simulate greenhouse temperature 30  (a simulated sensor)",
        formatter_class=RawDescriptionHelpFormatter)
    sensors.add_argument("name", nargs="?", help="one sensor (all when omitted), or history / chart")
    sensors.add_argument("words", nargs="*", metavar="NAME [QUANTITY]",
                         help="after history or chart: the sensor, and one of its quantities "
                              "(all when omitted)")
    sensors.add_argument("--fresh", action="store_true", help="measure now instead of the last "
                         "polled reading")
    sensors.add_argument("--since", metavar="WHEN", help="history, chart: from a span ago (24h, "
                         "the default; 7d, 90m) or a time (2026-11-25T18:00, local)")
    sensors.add_argument("--until", metavar="WHEN", help="history, chart: up to (default now)")
    sensors.add_argument("--points", type=whole_number(at_least=1), metavar="N",
                         help="history: at most N points per quantity (default 100, at most "
                              "1000); more are drawn together as min/mean/max")
    sensors.add_argument("--csv", action="store_true", help="history: every point as CSV")
    sensors.add_argument("-o", "--output", metavar="FILE.png", help="chart: the PNG to write")
    sensors.add_argument("--track", action="append", metavar="OUTPUT", help="chart: an output "
                         "(pin name or alias) drawn as on/off periods beneath; repeat for more "
                         "(default: those the sensor's rules switch and any that switched)")
    sensors.add_argument("--release", action="store_true", help="simulate: let go of the "
                         "held reading")
    sensors.set_defaults(handler=show_sensors)
    rules = sub.add_parser("rules", parents=[common], help="automation rules and what they did",
                           description="Each [[rules]] entry: its trigger, actions, how often "
                           "it fired and its last result or error.")
    rules.set_defaults(handler=show_rules)
    interlocks = sub.add_parser(
        "interlocks", parents=[common], help="interlocks and their state",
        description="Each [[interlocks]] entry: what it forbids and when, its condition's state "
        "now and whether it has tripped (from the running agent; from the config without one).")
    interlocks.set_defaults(handler=show_interlocks)
    schedules = sub.add_parser(
        "schedules", parents=[common], help="scheduled jobs: list, add, remove",
        description="Jobs from [[schedules]] and those added at runtime: when each runs next,\n"
        "its action and its last result. add and remove change the running agent (or, with\n"
        "none running, the state directory it reads at start).",
        epilog="examples:\n  edge-cli schedules\n"
        "  edge-cli schedules add water --cron '0 6 * * *' gpio write pump on for 30s\n"
        "  edge-cli schedules add check --every 10m sensor read greenhouse\n"
        "  edge-cli schedules remove water", formatter_class=RawDescriptionHelpFormatter)
    ssub = schedules.add_subparsers(dest="action", metavar="ACTION")
    ssub.add_parser("list", parents=[common], help="list the jobs (the default)")
    add = ssub.add_parser("add", parents=[common], help="add a job")
    add.add_argument("name")
    when = add.add_mutually_exclusive_group(required=True)
    when.add_argument("--cron", metavar="EXPR", help="five-field cron expression, '0 6 * * *'")
    when.add_argument("--every", metavar="DURATION", type=_every,
                      help="an interval from 1s to 10 years: 90s, 10m, 1h30m, 2d")
    when.add_argument("--at", metavar="TIME", help="once: '2026-12-01 06:00' (local) or ISO 8601")
    add.add_argument("--timezone", default="", help="IANA zone (default: the system's)")
    add.add_argument("--catch-up", choices=["skip", "once"], default="skip",
                     help="after downtime: skip missed runs (default) or run once")
    add.add_argument("words", nargs="+", metavar="ACTION",
                     help="what to do: gpio write PIN on|off [for 30s], gpio pwm PIN DUTY, "
                          "sensor read NAME, notify TEXT, prompt TEXT")
    remove = ssub.add_parser("remove", parents=[common], help="remove a job added at runtime")
    remove.add_argument("name")
    schedules.set_defaults(handler=schedules_command)


def _every(text: str) -> str:
    """``--every`` as the config reads it (1 s to 10 years), refused here with exit 2."""
    from edge.config.schedules import parse_every  # only when given: the client path stays light

    try:
        parse_every(text)
    except ValueError as exc:
        raise ArgumentTypeError(str(exc)) from None
    return text


def _readable_config(args: argparse.Namespace) -> LoadedConfig | None:
    """The config this command would run with, or None when this user cannot read it or it is
    wrong (then the agent, or the direct run, says why)."""
    from edge.config.loader import load_config

    try:
        return load_config(args.config)
    except (EdgeError, OSError):
        return None


def show_sensors(args: argparse.Namespace) -> int:
    if args.name == "simulate":
        from edge.cli.simulate_cmd import sensor_args, simulate

        return simulate(args, "sensors.simulate", sensor_args(args.words, args.release))
    if args.release:
        raise UsageError("--release: only with `edge-cli sensors simulate NAME QUANTITY`")
    if args.name in HISTORY_WORDS:
        from edge.cli.sensor_history_cmd import sensor_chart, sensor_history

        return sensor_history(args) if args.name == "history" else sensor_chart(args)
    given = [flag for flag, on in (("--since", args.since), ("--until", args.until),
                                   ("--csv", args.csv), ("--output", args.output),
                                   ("--track", args.track),
                                   ("--points", args.points is not None)) if on]
    if args.words or given:
        raise UsageError(f"{' '.join(given or args.words)}: only with `edge-cli sensors history` "
                         "or `sensors chart`; `edge-cli sensors [NAME] [--fresh]` shows the last "
                         "readings")
    op_args: dict[str, Any] = {"fresh": args.fresh}
    if args.name and args.node is not None:  # another node's sensors: it says which it has
        op_args["name"] = args.name
    elif args.name:
        loaded = _readable_config(args)
        if loaded is not None and args.name not in loaded.config.sensors:
            known = ", ".join(loaded.config.sensors) or "none configured"
            raise UsageError(f"no sensor {args.name!r} (sensors: {known})")
        op_args["name"] = args.name
    return perform(args, "sensors", op_args)[0]


def show_rules(args: argparse.Namespace) -> int:
    return perform(args, "rules", {})[0]


def show_interlocks(args: argparse.Namespace) -> int:
    return perform(args, "interlocks", {})[0]


def schedules_command(args: argparse.Namespace) -> int:
    if args.action == "add":
        op_args = {"name": args.name, "timezone": args.timezone, "catch_up": args.catch_up,
                   "action": " ".join(args.words)}
        timing = {"cron": args.cron, "every": args.every, "at": args.at}
        op_args.update({key: value for key, value in timing.items() if value is not None})
        check_new_job(args, op_args)
        return perform(args, "schedules.add", op_args)[0]
    if args.action == "remove":
        check_removal(args, args.name)
        return perform(args, "schedules.remove", {"name": args.name})[0]
    return perform(args, "schedules", {})[0]


def check_new_job(args: argparse.Namespace, fields: dict[str, Any]) -> None:
    """A UsageError (exit 2) saying why the job could never be added or run: its timing, zone,
    name or action as written, an ``at`` that has passed, a name that is taken, a pin or sensor
    the config does not allow it."""
    from datetime import UTC, datetime

    from edge.automation.actions import PinAction, SensorReadAction, parse_action
    from edge.config.schedules import ScheduleConfig, at_instant, parse_at

    job = ScheduleConfig.checked(**fields)
    try:
        action = parse_action(job.action)
    except ValueError as exc:
        raise UsageError(f"schedule {job.name!r}: {exc}") from None
    if job.at is not None and at_instant(parse_at(job.at), job.zone()) <= datetime.now(UTC):
        raise UsageError(f"schedule {job.name!r}: {job.spec} has already passed; give a later time")
    loaded = _readable_config(args)
    if loaded is None:
        return
    _name_is_free(loaded, job.name)
    if isinstance(action, PinAction | SensorReadAction):  # notices and prompts: the agent's
        _action_can_run(loaded, job)                       # channels and keys decide


def _name_is_free(loaded: LoadedConfig, name: str) -> None:
    from edge.automation.schedule_store import ScheduleStore

    if name in {job.name for job in loaded.config.schedules}:
        raise UsageError(f"schedule {name!r} already exists (it is in the config file); choose "
                         "another name")
    store = ScheduleStore.peek(loaded.state_dir)
    if store is not None and name in {job.config.name for job in store.runtime_jobs()}:
        raise UsageError(f"schedule {name!r} already exists (it was added at runtime); choose "
                         f"another name, or remove it first (edge-cli schedules remove {name})")


def _action_can_run(loaded: LoadedConfig, job: ScheduleConfig) -> None:
    """The job's pin or sensor action against the boards, the policy and the sensors."""
    from edge.automation.assembly import Automation
    from edge.hardware import build_hardware

    try:
        automation = Automation(loaded.config, build_hardware(loaded.config, resident=False))
    except EdgeError:
        return  # a config that is wrong: the agent (or the direct run) says why
    try:
        automation.check_schedule(job)
    except ValueError as exc:
        raise UsageError(f"schedule {job.name!r}: {exc}") from None


def check_removal(args: argparse.Namespace, name: str) -> None:
    """A UsageError (exit 2) when ``name`` is no job this command could remove."""
    from edge.automation.schedule_store import ScheduleStore

    loaded = _readable_config(args)
    if loaded is None:
        return
    if name in {job.name for job in loaded.config.schedules}:
        raise UsageError(f"schedule {name!r} is in the config file ([[schedules]]); remove it "
                         "there or set enabled = false")
    store = ScheduleStore.peek(loaded.state_dir)
    runtime = [job.config.name for job in store.runtime_jobs()] if store is not None else None
    if runtime is not None and name not in runtime:
        known = [job.name for job in loaded.config.schedules] + runtime
        raise UsageError(f"no schedule named {name!r}; known: {', '.join(known) or 'none'}")
