"""``edge-cli approvals [list]``, ``edge-cli approvals revoke ID``: the durable approvals, each
an admin's *Always* for one verified caller (``telegram:42``, ``token:claude``), one target and
one action, with who granted it and when (``<state>/approvals.json``). The running agent answers
(the control socket's ``approvals``, the local operator's); with none running this config's
state directory does. A revoked grant asks again at once. Exit 2 for an unknown id.
"""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser],
             common: argparse.ArgumentParser) -> None:
    approvals = sub.add_parser("approvals", parents=[common], help="list and revoke durable "
                               "approvals", description=__doc__,
                               formatter_class=argparse.RawDescriptionHelpFormatter)
    approvals.set_defaults(handler=run_list)
    asub = approvals.add_subparsers(dest="action", metavar="ACTION")
    asub.add_parser("list", parents=[common], help="the durable approvals").set_defaults(
        handler=run_list)
    revoke = asub.add_parser("revoke", parents=[common], help="revoke one: its caller asks again")
    revoke.add_argument("id", metavar="ID", help="the grant's id (edge-cli approvals)")
    revoke.set_defaults(handler=run_revoke)


def run_list(args: argparse.Namespace) -> int:
    from edge.cli.oneshot import perform

    return perform(args, "approvals", {})[0]


def run_revoke(args: argparse.Namespace) -> int:
    from edge.cli.oneshot import perform

    return perform(args, "approvals.revoke", {"id": args.id})[0]
