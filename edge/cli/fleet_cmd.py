"""``edge-cli fleet [--json]``: every edge-agent node on the broker, from what each keeps there
(retained): online, or offline and since when; version, uptime, boards, pins, sensors and the
last error.
"""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser],
             common: argparse.ArgumentParser) -> None:
    parser = sub.add_parser(
        "fleet", parents=[common], help="the edge-agent nodes on the broker",
        description="Every node on the [mqtt] broker, from its retained topics: online or since "
        "when offline, version, uptime, boards, pins, sensors and its last error. "
        "`edge-cli --node NAME status|pins|gpio|sensors|history` runs a command on one of them.")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from edge.cli.output import emit
    from edge.control.ops import OpResult

    return emit(OpResult(False, "edge-cli fleet is not ready yet", exit_code=1), args.json)
