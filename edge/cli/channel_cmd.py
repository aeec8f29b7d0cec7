"""``edge-cli channel pair NAME`` (a channel people pair with: telegram, signal): a one-time code
that pairs the next person who sends ``/pair CODE`` to the bot within 10 minutes.

With an agent running, the agent issues the code (the control socket's ``channel.pair``, the
local operator's), into its own state directory, which is the one it redeems from: under systemd
that is ``/var/lib/edge-agent``, which the operator can neither write nor share a file through.
The channel must then be one the agent runs (its secrets may live in ``/etc/edge-agent/env``,
which only the service reads). An agent this user may not ask gets no code behind its back: the
command says how to ask it. With no agent running, the code goes to this command's own state
directory, for the agent started with that config; the channel must be configured in the config
and environment this command sees. Exit 2 for a channel that is not configured either way: a
code for a bot that never runs pairs nobody. Earlier codes stay valid, up to three per channel;
a fourth drops the oldest, and the output says so. ``--json`` has ``via`` (``daemon`` or
``direct``), as the one-shot commands do."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from edge.channels.registry import pairable

if TYPE_CHECKING:
    from edge.control.ops import OpResult

SERVICE_USER = "edge"
"""The user and group the systemd service runs as (systemd/edge-agent.service)."""
SERVICE_STATE_DIR = Path("/var/lib/edge-agent")
"""The service's state directory (``StateDirectory=edge-agent``)."""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
    channel = sub.add_parser("channel", parents=[common], help="pair people with chat channels")
    csub = channel.add_subparsers(dest="action", metavar="ACTION", required=True)
    pair = csub.add_parser("pair", parents=[common], help="print a one-time pairing code",
                           description="Print a one-time code, valid for 10 minutes. Whoever sends "
                                       "/pair CODE to the bot is added to the channel's allowlist "
                                       "(in the running agent and in the config file). A running "
                                       "agent issues the code itself (ask it as root, its user or "
                                       "a member of its group); with none running the code waits "
                                       "in this config's state directory for the agent started "
                                       "with it. Earlier codes stay valid, at most three per "
                                       "channel (a fourth drops the oldest). The channel must be "
                                       "configured: exit 2 otherwise.")
    pair.add_argument("channel", choices=pairable())
    pair.set_defaults(handler=pair_code)


def pair_code(args: argparse.Namespace) -> int:
    from edge.cli.output import emit
    from edge.config.locate import load_raw
    from edge.control import client
    from edge.control.client import SocketForbidden
    from edge.control.ops import OpResult
    from edge.core.exc import DaemonUnavailable
    from edge.core.ownership import running_agent
    from edge.core.paths import lock_candidates, socket_candidates

    raw = load_raw(args.config)
    state_dir = (raw.data.get("paths") or {}).get("state_dir")
    configured = state_dir if isinstance(state_dir, str) else None
    try:
        answer = client.request(socket_candidates(configured), "channel.pair",
                                {"channel": args.channel})
    except SocketForbidden as exc:
        return emit(OpResult(False, forbidden(args.channel, exc)), args.json, via="daemon")
    except DaemonUnavailable:
        owner = running_agent(lock_candidates(configured))
        if owner is not None:  # a code written here would never reach it
            result = OpResult(False, f"an agent is running (pid {owner[1]}, lock {owner[0]}) but "
                              "its control socket did not answer, and only it can issue a code "
                              "it accepts; check `edge-cli logs`, or restart it (`sudo systemctl "
                              "restart edge-agent`)")
            return emit(result, args.json, via="daemon")
        return emit(pair_locally(args), args.json, via="direct")
    return emit(OpResult.from_dict(answer), args.json, via="daemon")


def forbidden(channel: str, exc: Exception) -> str:
    """What to do when an agent runs but this user may not ask it for a code."""
    return (f"{exc}, e.g. `sudo -u {SERVICE_USER} edge-cli channel pair {channel}`. No code was "
            "issued: only the running agent can issue one it accepts (a code in your own state "
            "directory would never reach it)")


def pair_locally(args: argparse.Namespace) -> OpResult:
    """No agent running: a code in this config's state directory, for a configured channel."""
    from edge.channels.pairing import PairingCodes, describe_issued, issued_data, setup_hint
    from edge.channels.registry import channel_spec
    from edge.config.loader import load_config
    from edge.control.ops import OpResult
    from edge.core.exc import EXIT_USAGE

    loaded = load_config(args.config)
    if not channel_spec(args.channel).section(loaded.config).enabled:
        return OpResult(False, f"channel {args.channel} is not configured in {loaded.source} "
                        f"and no agent is running: {setup_hint(args.channel)}; then run "
                        f"`edge-cli channel pair {args.channel}` again", exit_code=EXIT_USAGE)
    issued = PairingCodes(loaded.state_dir / "pairing.json").issue(args.channel)
    message = describe_issued(args.channel, issued)
    data = issued_data(args.channel, issued)
    data["state_dir"] = str(loaded.state_dir)
    if loaded.state_dir != SERVICE_STATE_DIR and SERVICE_STATE_DIR.is_dir():
        message += (f"\nNo agent is running: the code waits in {loaded.state_dir} for an agent "
                    f"you start with this config (`edge-cli run`). The edge-agent service keeps "
                    f"its codes in {SERVICE_STATE_DIR} and will not know this one: start it "
                    f"(`sudo systemctl start edge-agent`), then run `edge-cli channel pair "
                    f"{args.channel}` again.")
    return OpResult(True, message, data)
