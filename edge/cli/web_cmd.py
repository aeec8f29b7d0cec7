"""``edge-cli web pair [--operator|--admin] [--name NAME]``, ``edge-cli web sessions``, ``edge-cli
web revoke NAME``: the browsers paired with the web page (``[web] listen``).

``pair`` prints a one-time code (10 minutes, one browser): open the page, enter it, and that
browser holds a named session (a viewer by default; ``--operator`` may switch outputs,
``--admin`` also approves and puts outputs in their safe state). The running agent issues it
(the control socket's ``web.pair``, the local operator's); with none running it waits in this
config's state directory. ``revoke`` forgets a session: its browser is refused from its next
request. Exit 2 for an unknown session or a bad name.
"""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser],
             common: argparse.ArgumentParser) -> None:
    web = sub.add_parser("web", parents=[common], help="pair browsers with the web page",
                         description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    wsub = web.add_subparsers(dest="action", metavar="ACTION", required=True)
    pair = wsub.add_parser("pair", parents=[common], help="print a one-time code for one browser",
                           description="Print a one-time code, valid for 10 minutes, that pairs "
                                       "one browser with the web page (a viewer by default).")
    role = pair.add_mutually_exclusive_group()
    role.add_argument("--operator", dest="role", action="store_const", const="operator",
                      help="the browser may also switch outputs")
    role.add_argument("--admin", dest="role", action="store_const", const="admin",
                      help="the browser may also approve and put outputs in their safe state")
    pair.add_argument("--name", help="the session's name (default browser-N): the caller web:NAME")
    pair.set_defaults(handler=run_pair, role="viewer")
    listed = wsub.add_parser("sessions", parents=[common], help="the paired browsers")
    listed.set_defaults(handler=run_sessions)
    revoke = wsub.add_parser("revoke", parents=[common], help="forget a paired browser")
    revoke.add_argument("name", help="the session's name (edge-cli web sessions)")
    revoke.set_defaults(handler=run_revoke)


def run_pair(args: argparse.Namespace) -> int:
    from edge.cli.oneshot import perform

    op_args = {"role": args.role, **({"name": args.name} if args.name else {})}
    return perform(args, "web.pair", op_args)[0]


def run_sessions(args: argparse.Namespace) -> int:
    from edge.cli.oneshot import perform

    return perform(args, "web.sessions", {})[0]


def run_revoke(args: argparse.Namespace) -> int:
    from edge.cli.oneshot import perform

    return perform(args, "web.revoke", {"name": args.name})[0]
