"""``edge-cli fleet pair NAME [--code CODE]``, ``fleet unpair NAME``, ``fleet keys``: the keys this
machine shares with other agents (:mod:`edge.fleet.keys`). Pairing never puts a key on the
broker: one machine makes it and shows it once, as a code; a person types it on the other.

On the node (``shed``)::

    $ edge-cli fleet pair kitchen
    Paired with kitchen on this machine (shed). On kitchen, run:
      edge-cli fleet pair shed --code ABCD-EFGH-IJKL-MNOP-QRST-UVWX-YZ23-4567

On the controller (``kitchen``)::

    $ edge-cli fleet pair shed --code ABCD-EFGH-IJKL-MNOP-QRST-UVWX-YZ23-4567
    Paired with shed: requests and answers between kitchen and shed are sealed with this key.

``--code -`` reads the code from stdin (kept out of the shell's history). Keys are kept in the
state directory (``fleet-keys.json``, 0600), so run these as the agent's user (``sudo -u edge
edge-cli fleet pair ...`` under systemd); a running agent takes a new key at once.

Exit codes: 0 done; 1 nothing to unpair, or the state directory cannot be written; 2 a code
that is not one, or a name that is not a node id.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from edge.cli.output import emit
from edge.control.ops import OpResult
from edge.core.exc import EdgeError, UsageError

if TYPE_CHECKING:
    from edge.fleet.keys import FleetKeys


def _keys(args: argparse.Namespace) -> tuple[str, FleetKeys]:
    from edge.config.loader import load_config
    from edge.core.paths import state_dir
    from edge.fleet.keys import FleetKeys

    config = load_config(args.config).config
    return config.mqtt.node_id, FleetKeys.of(config.mqtt.fleet_keys,
                                             state_dir(config.paths.state_dir))


def pair(args: argparse.Namespace) -> int:
    from edge.fleet.keys import new_code

    me, keys = _keys(args)
    code = args.code
    if code == "-":
        code = sys.stdin.readline().strip()
    made = code is None
    code = new_code() if made else code
    try:
        keys.file(args.name, code)
    except ValueError as exc:  # a PairingCodeError among them
        raise UsageError(str(exc)) from None
    except OSError as exc:
        raise EdgeError(f"cannot write {keys.path}: {exc.strerror or exc}; run this as the "
                        "agent's user (`sudo -u edge edge-cli fleet pair ...` under systemd)"
                        ) from None
    if made:
        command = f"edge-cli fleet pair {me} --code {code}"
        message = (f"Paired with {args.name} on this machine ({me}). On {args.name}, run:\n"
                   f"  {command}\nThe code is the key, shown this once: type it there or send "
                   "it over SSH, never over the broker or a chat.")
        return emit(OpResult(True, message, {"name": args.name, "me": me, "code": code,
                                             "command": command}), args.json)
    return emit(OpResult(True, f"Paired with {args.name}: requests and answers between {me} "
                         f"and {args.name} are sealed with this key.",
                         {"name": args.name, "me": me}), args.json)


def unpair(args: argparse.Namespace) -> int:
    me, keys = _keys(args)
    try:
        gone = keys.forget(args.name)
    except OSError as exc:
        raise EdgeError(f"cannot write {keys.path}: {exc.strerror or exc}; run this as the "
                        "agent's user") from None
    if not gone:
        return emit(OpResult(False, f"{me} has no key filed for {args.name} (keys given in "
                             "[mqtt.fleet_keys] are removed from the config)",
                             {"name": args.name}), args.json)
    return emit(OpResult(True, f"Unpaired from {args.name}: nothing it sends is run here, and "
                         "nothing is asked of it.", {"name": args.name}), args.json)


def listing(args: argparse.Namespace) -> int:
    me, keys = _keys(args)
    names = keys.names()
    text = (f"{me} shares a key with: {', '.join(names)}" if names else
            f"{me} is paired with no agent (`edge-cli fleet pair NAME`)")
    return emit(OpResult(True, text, {"me": me, "paired": names}), args.json)


def register(fleet: argparse.ArgumentParser, common: argparse.ArgumentParser) -> None:
    """``pair``, ``unpair`` and ``keys`` under ``edge-cli fleet``."""
    actions = fleet.add_subparsers(dest="fleet_action", metavar="ACTION")
    pairing = actions.add_parser(
        "pair", parents=[common], help="share a key with another agent (no key on the broker)",
        description="Without --code: make a key for NAME and print the command to run on NAME. "
        "With --code: keep the key NAME printed. Every fleet request and answer between the "
        "two is sealed with it.")
    pairing.add_argument("name", metavar="NAME", help="the other agent's node_id")
    pairing.add_argument("--code", help="the code the other machine printed ('-': from stdin)")
    pairing.set_defaults(handler=pair)
    unpairing = actions.add_parser("unpair", parents=[common], help="forget the key shared "
                                   "with NAME")
    unpairing.add_argument("name", metavar="NAME")
    unpairing.set_defaults(handler=unpair)
    actions.add_parser("keys", parents=[common], help="the agents this machine shares a key "
                       "with (names only)").set_defaults(handler=listing)
