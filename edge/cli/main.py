"""``edge-cli``: the agent's command line. Imports are lazy so quick commands stay quick.

Exit codes: 0 success, 1 a refused or failed action, 2 bad usage or config.
"""

from __future__ import annotations

import sys
from importlib import import_module

from edge import __version__

COMMAND_MODULES = ("run", "oneshot", "config_cmd", "channel_cmd", "memory_cmd", "models_cmd",
                   "boards_cmd", "firmware_cmd", "doctor_cmd", "logs_cmd", "service_cmd",
                   "completion_cmd")
"""Each module under edge.cli that adds commands: ``register(subparsers, common)`` sets a
``handler`` default; modules stay light at import time (heavy imports inside handlers)."""

DESCRIPTION = """Run edge-agent and operate it over SSH.

One-shot commands (status, pins, gpio) go through the running agent's control socket when it is
up, and act on the board directly otherwise."""

EPILOG = """examples:
  edge-cli run                     start the agent in the foreground
  edge-cli gpio write led on       switch the 'led' pin on
  edge-cli gpio read led --json    read it, as JSON
  edge-cli config init             write a commented config to edit

exit codes: 0 ok, 1 refused or failed, 2 bad usage or config"""


def build_parser():
    import argparse

    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--config", metavar="PATH", default=argparse.SUPPRESS,
                        help="config file (default: $EDGE_CONFIG, /etc/edge-agent/config.toml, "
                             "~/.config/edge-agent/config.toml)")
    common.add_argument("--json", action="store_true", default=argparse.SUPPRESS,
                        help="print machine-readable JSON")

    parser = argparse.ArgumentParser(prog="edge-cli", description=DESCRIPTION, epilog=EPILOG,
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     parents=[common])
    parser.add_argument("-V", "--version", action="version", version=f"edge-cli {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    for name in COMMAND_MODULES:
        import_module(f"edge.cli.{name}").register(sub, common)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv in (["--version"], ["-V"]):  # the fast path: no argparse, nothing else imported
        print(f"edge-cli {__version__}")
        return 0
    args = build_parser().parse_args(argv)
    args.json = getattr(args, "json", False)
    args.config = getattr(args, "config", None)
    from edge.exc import EdgeError

    try:
        return args.handler(args)
    except EdgeError as exc:
        print(f"edge-cli: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `edge-cli config show | head`
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
