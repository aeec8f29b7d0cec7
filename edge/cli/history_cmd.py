"""``edge-cli history [PIN] [--since 2h] [--who CALLER] [--json]``: the audit trail of the door
to the pins (``<state>/audit.db``), read-only, with or without a running agent.

    $ edge-cli history pump --since 1d
    2026-05-01 07:00:02 pump: on (read back on) by schedule:water (schedule)
    2026-05-01 07:10:02 pump: off (read back off) [auto-off] by agent (agent, auto-off)
    2026-05-01 09:12:40 fan: refused, interlock heat-or-cool by telegram:42 (telegram, message 17)
"""

from __future__ import annotations

import argparse
import time

from edge.cli.arguments import whole_number
from edge.cli.output import emit
from edge.config.locate import load_raw
from edge.control.ops import OpResult
from edge.core.exc import EdgeError
from edge.core.paths import state_dir


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser],
             common: argparse.ArgumentParser) -> None:
    parser = sub.add_parser(
        "history", parents=[common], help="who switched which pin, when and why (audit trail)",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("pin", nargs="?", help="only this pin (name or alias)")
    parser.add_argument("--since", metavar="DURATION", help="only this recent: 30m, 2h, 7d")
    parser.add_argument("--who", metavar="CALLER",
                        help="only this requester: telegram:42, or a door such as schedule, cli")
    parser.add_argument("-n", "--limit", type=whole_number(at_least=1), default=50, metavar="N",
                        help="at most N records, the newest (default 50)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from edge.core.durations import parse_duration

    try:
        since = time.time() - parse_duration(args.since) if args.since else None
    except ValueError as exc:
        return emit(OpResult(False, str(exc), exit_code=2), args.json)
    if args.node is not None:  # that node's audit trail, read there by its history tool
        from edge.cli.oneshot import perform

        remote = {"pin": args.pin, "since": args.since, "who": args.who, "limit": args.limit}
        return perform(args, "history", {k: v for k, v in remote.items() if v is not None})[0]
    import sqlite3

    from edge.audit import AUDIT_FILE, history_text, read_history

    raw = load_raw(args.config)
    configured = (raw.data.get("paths") or {}).get("state_dir")
    path = state_dir(configured if isinstance(configured, str) else None) / AUDIT_FILE
    try:
        records = read_history(path, args.pin, since=since, who=args.who, limit=args.limit)
    except sqlite3.DatabaseError as exc:  # a damaged or foreign file: say which, exit 1
        raise EdgeError(f"cannot read the audit trail {path}: {exc}; the agent starts a new "
                        "one if you move this file away") from None
    return emit(OpResult(True, history_text(records, args.pin),
                         {"records": [a.as_dict() for a in records]}), args.json)
