"""``edge-cli sensors``, ``edge-cli rules`` and ``edge-cli schedules``: through the running agent
when there is one (its live readings, what its rules did, when its jobs run next), else from the
config (sensors are read directly; rules and schedules are listed as configured)."""

from __future__ import annotations

from edge.cli.oneshot import perform


def register(sub, common) -> None:
    sensors = sub.add_parser("sensors", parents=[common], help="sensor readings",
                             description="The configured sensors and their last readings.")
    sensors.add_argument("name", nargs="?", help="one sensor (all when omitted)")
    sensors.add_argument("--fresh", action="store_true", help="measure now instead of the last "
                         "polled reading")
    sensors.set_defaults(handler=show_sensors)
    rules = sub.add_parser("rules", parents=[common], help="automation rules and what they did",
                           description="Each [[rules]] entry: its trigger, actions, how often "
                           "it fired and its last result or error.")
    rules.set_defaults(handler=show_rules)


def show_sensors(args) -> int:
    op_args: dict = {"fresh": args.fresh}
    if args.name:
        op_args["name"] = args.name
    return perform(args, "sensors", op_args)[0]


def show_rules(args) -> int:
    return perform(args, "rules", {})[0]
