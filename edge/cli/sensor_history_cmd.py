"""``edge-cli sensors history NAME [QUANTITY]`` and ``edge-cli sensors chart NAME [QUANTITY]
[--track OUTPUT]... --output FILE.png`` (parsed with ``edge-cli sensors``,
:mod:`edge.cli.automation_cmd`): asked of the running agent over its control socket
(``sensors.history``, the ``sensor_history`` tool; ``sensors.chart``, drawn by the agent from its
own files, which this user may not be able to read), else read from the state directory's
files directly, opened read-only.

    $ edge-cli sensors history greenhouse temperature --since 12h
    greenhouse temperature (°C) 2026-11-25 23:00 .. 2026-11-26 11:00: low 11.2 at ...
      per 10m (low/mean/high): 23:00 14.1/14.3/14.6, 23:10 ...

An unknown sensor or quantity is bad usage (exit 2), as is a span that cannot be read; a
history that cannot be read (another user's, damaged) exits 1 saying why.
"""

from __future__ import annotations

import argparse
import base64
import sys
import time
from pathlib import Path
from typing import Any

from edge.cli.oneshot import ask_agent, perform
from edge.cli.output import emit
from edge.control.ops import OpResult
from edge.core.exc import EdgeError, UsageError
from edge.readings.moments import span

MAX_HISTORY_POINTS = 1000
"""As the ``sensor_history`` tool takes (:data:`edge.tools.sensor_history.MAX_POINTS`)."""


def _history_request(args: argparse.Namespace, command: str) -> dict[str, Any]:
    """``sensors history|chart NAME [QUANTITY]`` and its span as the operation's arguments;
    a UsageError (exit 2) for what could never be answered."""
    if not args.words or len(args.words) > 2:
        raise UsageError(f"sensors {command} takes the sensor and optionally one quantity: "
                         f"edge-cli sensors {command} NAME [QUANTITY]")
    wrong = {"history": [("--output", args.output), ("--fresh", args.fresh),
                         ("--track", args.track)],
             "chart": [("--csv", args.csv), ("--fresh", args.fresh),
                       ("--points", args.points is not None)]}[command]
    for flag, on in wrong:
        if on:
            raise UsageError(f"{flag} is not an option of sensors {command}")
    if args.points is not None and args.points > MAX_HISTORY_POINTS:
        raise UsageError(f"--points {args.points}: at most {MAX_HISTORY_POINTS}")
    try:
        span(args.since, args.until, now=time.time())
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    request: dict[str, Any] = {"sensor": args.words[0], "since": args.since or "24h"}
    if len(args.words) == 2:
        request["quantity"] = args.words[1]
    if args.until:
        request["until"] = args.until
    if args.track:
        request["outputs"] = list(args.track)
    return request


def _unreadable(path: object, exc: Exception) -> EdgeError:
    return EdgeError(f"cannot read the sensor history {path}: {exc}; run the command as the "
                     "agent's user (or with sudo), or start the agent and ask it")


def _history_from_file(args: argparse.Namespace, op_args: dict[str, Any]) -> OpResult:
    """No agent: the history tool over the state directory's file, opened read-only."""
    import asyncio
    import getpass
    import sqlite3

    from edge.config.loader import load_config
    from edge.core.requester import Requester
    from edge.readings.store import ReadingStore
    from edge.tools.sensor_history import SensorHistoryTool

    loaded = load_config(args.config)
    store = ReadingStore.in_state_dir(loaded.state_dir, read_only=True)
    tool = SensorHistoryTool(store, {n: s.units for n, s in loaded.config.sensors.items()})

    async def once() -> OpResult:
        try:
            return OpResult.from_tool(await tool.execute(op_args, Requester("cli", getpass.getuser())))
        finally:
            await store.close()

    try:
        return asyncio.run(once())
    except (sqlite3.DatabaseError, OSError) as exc:
        raise _unreadable(store.path, exc) from None


def sensor_history(args: argparse.Namespace) -> int:
    """``edge-cli sensors history NAME [QUANTITY]``: summaries and points, ``--json`` (every
    bucket in ``data.series``) or ``--csv``."""
    if args.csv and args.json:
        raise UsageError("--csv and --json: choose one")
    op_args = {**_history_request(args, "history"), "points": args.points or 100}
    if args.node is not None:  # that node's history, asked through the broker
        return perform(args, "sensors.history", op_args)[0]
    result = ask_agent(args, "sensors.history", op_args)
    via = "daemon"
    if result is None:
        result, via = _history_from_file(args, op_args), "direct"
    if args.csv and result.ok:
        from edge.readings.text import series_csv, series_from_dict

        sys.stdout.write(series_csv([series_from_dict(one) for one in result.data["series"]]))
        return 0
    return emit(result, args.json, via=via)


def _chart_from_file(args: argparse.Namespace,
                     op_args: dict[str, Any]) -> tuple[OpResult, bytes]:
    """No agent: the chart drawn here from the state directory's history and audit trail."""
    import asyncio
    import sqlite3

    from edge.charts import draw_chart
    from edge.config.loader import load_config

    loaded = load_config(args.config)
    since, until = span(op_args["since"], op_args.get("until"), now=time.time())
    try:
        chart = asyncio.run(draw_chart(loaded.config, loaded.state_dir, op_args["sensor"],
                                       op_args.get("quantity"), since=since, until=until,
                                       outputs=op_args.get("outputs")))
    except (sqlite3.DatabaseError, OSError) as exc:
        raise _unreadable(loaded.state_dir, exc) from None
    return OpResult(True, "", {"sensor": op_args["sensor"], "quantity": op_args.get("quantity"),
                               "since": since, "until": until, "bytes": len(chart.png),
                               "caption": chart.caption(), **chart.figures()}), chart.png


def sensor_chart(args: argparse.Namespace) -> int:
    """``edge-cli sensors chart NAME [QUANTITY] --output FILE.png``: drawn by the running agent
    (from its own history and audit trail), else here from the files."""
    op_args = _history_request(args, "chart")
    if not args.output:
        raise UsageError("sensors chart needs --output FILE.png: where to write the picture")
    if args.node is not None:
        raise UsageError(f"charts are drawn where the history is: run `edge-cli sensors chart` "
                         f"on node {args.node}")
    asked = ask_agent(args, "sensors.chart", op_args)
    if asked is None:
        (result, png), via = _chart_from_file(args, op_args), "direct"
    else:
        result, via = asked, "daemon"
        png = base64.b64decode(result.data.pop("png_base64", "")) if result.ok else b""
    if result.ok:
        output = Path(args.output)
        try:
            output.write_bytes(png)
        except OSError as exc:
            result = OpResult(False, f"cannot write the chart to {output}: {exc.strerror or exc}",
                              result.data, exit_code=1)
        else:
            result.data["output"] = str(output)
            caption = result.data.get("caption")
            result.message = f"wrote {output} ({len(png)} bytes)" + (
                f"\n{caption}" if caption else "")
    return emit(result, args.json, via=via)
