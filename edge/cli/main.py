"""``edge-cli``: the agent's command line. Imports are lazy so quick commands stay quick.

Exit codes: 0 success, 1 a refused or failed action, 2 bad usage or config.
"""

from __future__ import annotations

import sys

from edge import __version__

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

    sub.add_parser("run", parents=[common], help="start the agent in the foreground",
                   description="Start the agent in the foreground: boards, channels, control "
                               "socket. Stops on SIGTERM/Ctrl-C (pins go to their safe levels) "
                               "or at end of piped input.")
    sub.add_parser("status", parents=[common], help="daemon, boards, channels and provider")
    sub.add_parser("pins", parents=[common], help="allowlisted pins, modes and states")

    gpio = sub.add_parser("gpio", parents=[common], help="read or drive a pin")
    gsub = gpio.add_subparsers(dest="action", metavar="ACTION", required=True)
    read = gsub.add_parser("read", parents=[common], help="read a pin")
    read.add_argument("pin", help="pin name or alias (led, GPIO17, BOARD11)")
    write = gsub.add_parser("write", parents=[common], help="switch an output pin on or off")
    write.add_argument("pin")
    write.add_argument("value", type=str.lower, choices=["on", "off"])
    pwm = gsub.add_parser("pwm", parents=[common], help="set a PWM pin's duty cycle")
    pwm.add_argument("pin")
    pwm.add_argument("duty", type=float, help="duty cycle 0..1")
    pwm.add_argument("--frequency", type=float, metavar="HZ", help="PWM frequency in Hz")

    config = sub.add_parser("config", parents=[common], help="write, check or show the config")
    csub = config.add_subparsers(dest="action", metavar="ACTION", required=True)
    init = csub.add_parser("init", parents=[common], help="write a commented example config")
    init.add_argument("path", nargs="?", help="where to write it ('-' for stdout; default "
                                              "~/.config/edge-agent/config.toml)")
    init.add_argument("--force", action="store_true", help="overwrite an existing file")
    csub.add_parser("check", parents=[common], help="validate the config (exit 2 if wrong)")
    csub.add_parser("show", parents=[common], help="print the effective config, secrets redacted")
    return parser


def dispatch(args) -> int:
    command = args.command
    if command == "run":
        from edge.cli.run import run_agent

        return run_agent(args)
    if command == "config":
        from edge.cli import config_cmd

        return config_cmd.run(args)
    from edge.cli import oneshot

    return oneshot.run(args)


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
        return dispatch(args)
    except EdgeError as exc:
        print(f"edge-cli: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
