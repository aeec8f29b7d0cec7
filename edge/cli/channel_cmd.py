"""``edge-cli channel pair NAME`` (a channel people pair with: telegram, signal): a one-time code
that pairs the next person who sends ``/pair CODE`` to the bot within 10 minutes (works whether
or not the agent is running). The channel must be configured, in the config and environment this
command sees or in the running agent (whose secrets may live in ``/etc/edge-agent/env``, which
only the service reads); exit 2 otherwise: a code for a bot that never runs pairs nobody. Earlier
codes stay valid, up to three per channel; a fourth drops the oldest, and the output says so."""

from __future__ import annotations

import argparse
import time
from typing import Any

from edge.channels.registry import pairable

SETUP = {
    "telegram": "set bot_token in [channels.telegram] (or EDGE_CHANNELS__TELEGRAM__BOT_TOKEN; "
                "a token comes from @BotFather)",
    "signal": 'set http_url and account in [channels.signal] (a signal-cli daemon: '
              '`signal-cli -a ACCOUNT daemon --http 127.0.0.1:8080`)',
}
"""What a pairable channel needs before anyone can pair with it."""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
    channel = sub.add_parser("channel", parents=[common], help="pair people with chat channels")
    csub = channel.add_subparsers(dest="action", metavar="ACTION", required=True)
    pair = csub.add_parser("pair", parents=[common], help="print a one-time pairing code",
                           description="Print a one-time code, valid for 10 minutes. Whoever sends "
                                       "/pair CODE to the bot is added to the channel's allowlist "
                                       "(in the running agent and in the config file). Earlier "
                                       "codes stay valid, at most three per channel (a fourth "
                                       "drops the oldest). The channel must be configured: "
                                       "exit 2 otherwise.")
    pair.add_argument("channel", choices=pairable())
    pair.set_defaults(handler=pair_code)


def pair_code(args: argparse.Namespace) -> int:
    from edge.channels.pairing import CODE_TTL_SECONDS, PairingCodes
    from edge.channels.registry import channel_spec
    from edge.cli.output import emit
    from edge.config.loader import load_config
    from edge.control.ops import OpResult
    from edge.core.exc import ConfigError

    loaded = load_config(args.config)
    if not (channel_spec(args.channel).section(loaded.config).enabled
            or runs_in_agent(args.channel, loaded.config.paths.state_dir)):
        setup = SETUP.get(args.channel, f"enable [channels.{args.channel}]")
        raise ConfigError(f"channel {args.channel} is not configured in {loaded.source}, nor run "
                          f"by a running agent: {setup}; then run `edge-cli channel pair "
                          f"{args.channel}` again")
    issued = PairingCodes(loaded.state_dir / "pairing.json").issue(args.channel)
    until = time.strftime("%H:%M", time.localtime(issued.expires))
    lines = [f"Pairing code for {args.channel}: {issued.code}",
             f"Send  /pair {issued.code}  to the bot before {until} ({CODE_TTL_SECONDS // 60} minutes)."]
    earlier = issued.outstanding - 1
    if issued.dropped:
        lines.append(f"The oldest earlier code no longer works (at most {issued.outstanding} "
                     f"at once); {earlier} earlier code{'s' if earlier != 1 else ''} still "
                     f"work{'' if earlier != 1 else 's'}.")
    elif earlier:
        lines.append(f"{earlier} earlier code{'s' if earlier != 1 else ''} still "
                     f"work{'' if earlier != 1 else 's'} until used or expired.")
    data: dict[str, Any] = {"channel": args.channel, "code": issued.code, "expires": issued.expires,
                            "outstanding": issued.outstanding, "dropped": issued.dropped}
    return emit(OpResult(True, "\n".join(lines), data), args.json)


def runs_in_agent(channel: str, configured_state_dir: str | None) -> bool:
    """Whether a running agent has ``channel`` among its channels (its status says so)."""
    from edge.control import client
    from edge.core.exc import EdgeError
    from edge.core.paths import socket_candidates

    try:
        answer = client.request(socket_candidates(configured_state_dir), "status")
    except EdgeError:  # no agent, or one this user may not ask: nothing to go by
        return False
    rows = (answer.get("data") or {}).get("channels") or []
    return any(isinstance(row, dict) and row.get("name") == channel for row in rows)
