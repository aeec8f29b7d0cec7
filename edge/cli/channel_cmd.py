"""``edge-cli channel pair NAME`` (a channel people pair with: telegram, signal): a one-time code
that pairs the next person who sends ``/pair CODE`` to the bot within 10 minutes (works whether
or not the agent is running)."""

from __future__ import annotations

import argparse
import json
import time

from edge.channels.registry import pairable


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
    channel = sub.add_parser("channel", parents=[common], help="pair people with chat channels")
    csub = channel.add_subparsers(dest="action", metavar="ACTION", required=True)
    pair = csub.add_parser("pair", parents=[common], help="print a one-time pairing code",
                           description="Print a one-time code, valid for 10 minutes. Whoever sends "
                                       "/pair CODE to the bot is added to the channel's allowlist "
                                       "(in the running agent and in the config file).")
    pair.add_argument("channel", choices=pairable())
    pair.set_defaults(handler=pair_code)


def pair_code(args: argparse.Namespace) -> int:
    from edge.channels.pairing import PairingCodes
    from edge.config.locate import load_raw
    from edge.core.paths import state_dir

    raw = load_raw(args.config)
    configured = (raw.data.get("paths") or {}).get("state_dir")
    codes = PairingCodes(state_dir(configured if isinstance(configured, str) else None) / "pairing.json")
    code, expires = codes.issue(args.channel)
    if args.json:
        print(json.dumps({"ok": True, "channel": args.channel, "code": code, "expires": expires}))
    else:
        until = time.strftime("%H:%M", time.localtime(expires))
        print(f"Pairing code for {args.channel}: {code}\n"
              f"Send  /pair {code}  to the bot before {until} (10 minutes).")
    return 0
