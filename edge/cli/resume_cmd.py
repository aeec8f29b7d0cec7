"""``edge-cli resume``: leave safe mode after a crash loop (:mod:`edge.safe_mode`).

Through the running agent's control socket (the local operator only): its rules and schedules
start and model turns are answered again. With no agent running, the ledger of runs forgives the
abnormal ends so far, so the next start is a normal one."""

from __future__ import annotations

import argparse

from edge.cli.output import emit
from edge.config.locate import load_raw
from edge.control import client
from edge.control.ops import OpResult
from edge.core.exc import DaemonUnavailable
from edge.core.paths import socket_candidates, state_dir


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser],
             common: argparse.ArgumentParser) -> None:
    parser = sub.add_parser(
        "resume", parents=[common], help="leave safe mode after a crash loop",
        description="Leave safe mode: after three abnormal ends (crash, kill, watchdog) within "
                    "ten minutes the agent starts with rules, schedules and model turns held. "
                    "This starts them in the running agent; with no agent running, the next "
                    "start is a normal one.")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from edge.safe_mode import RunLedger

    raw = load_raw(args.config)
    configured = (raw.data.get("paths") or {}).get("state_dir")
    configured = configured if isinstance(configured, str) else None
    try:
        result = OpResult.from_dict(client.request(socket_candidates(configured), "resume"))
        return emit(result, args.json, via="daemon")
    except DaemonUnavailable:
        ledger = RunLedger.in_state_dir(state_dir(configured))
        ledger.forgive()
        result = OpResult(True, f"no running agent; the abnormal ends in {ledger.path} are "
                          "forgiven, so the next start is a normal one", {"safe_mode": None})
        return emit(result, args.json, via="direct")
