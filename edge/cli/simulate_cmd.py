"""``edge-cli gpio simulate PIN on|off`` and ``edge-cli sensors simulate NAME QUANTITY VALUE``
(``--release``): asked of the running agent (``gpio.simulate``, ``sensors.simulate``,
:mod:`edge.ops.simulation`), whose rules, interlocks, MQTT and history see the edge or the
reading. Without an agent there is nothing to pretend to: start one with
``edge-cli run --simulate``. A board or sensor that is real refuses (exit 2).

    $ edge-cli gpio simulate tank_low on
    gpio:GPIO23 (tank_low) simulated on
"""

from __future__ import annotations

import argparse
from typing import Any

from edge.cli.agent_socket import ask_agent
from edge.cli.output import emit
from edge.core.exc import UsageError
from edge.ops.result import OpResult

NO_AGENT = ("no agent is running to simulate in; start one with `edge-cli run --simulate` (every "
            "board and sensor simulated) or with simulate = true on the boards and sensors to try")


def simulate(args: argparse.Namespace, op: str, op_args: dict[str, Any]) -> int:
    """``op`` asked of the running agent, its answer printed; exit 1 when none runs."""
    if args.node is not None:
        raise UsageError(f"{op} is the local agent's: run it on node {args.node}")
    result = ask_agent(args, op, op_args) or OpResult(False, NO_AGENT, exit_code=1)
    return emit(result, args.json, via="daemon")


def sensor_args(words: list[str], release: bool) -> dict[str, Any]:
    """``NAME QUANTITY VALUE`` (or ``NAME QUANTITY --release``) as the operation's arguments."""
    if release and len(words) == 2:
        return {"name": words[0], "quantity": words[1], "release": True}
    if not release and len(words) == 3:
        try:
            return {"name": words[0], "quantity": words[1], "value": float(words[2])}
        except ValueError:
            raise UsageError(f"{words[2]!r} is not a number: edge-cli sensors simulate NAME "
                             "QUANTITY VALUE") from None
    raise UsageError("edge-cli sensors simulate NAME QUANTITY VALUE (hold a reading), or NAME "
                     "QUANTITY --release (let go of it)")
