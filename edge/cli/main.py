"""``edge-cli``: the agent's command line. Imports are lazy so quick commands stay quick.

Exit codes: :data:`edge.core.exc.EXIT_CODES` (0 success, 1 a refused or failed action, 2 bad
usage or config, and a few more), printed by ``--help``.
"""

import os
import sys

from edge import __version__
from edge.core.exc import (
    EXIT_CODES,
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    EdgeError,
    UsageError,
)

TYPE_CHECKING = False
"""Not imported from :mod:`typing`, which ``edge-cli --version`` would otherwise load (2 ms); nor
are contextlib and importlib imported before a command needs them (3 ms more), nor ``__future__``
(the annotations naming what only a type checker imports are quoted)."""
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from typing import Any, NoReturn

    from edge.core.code_cache import CodeTable

COMMAND_MODULES = {
    "run": "run", "status": "oneshot", "pins": "oneshot", "gpio": "oneshot",
    "config": "config_cmd", "channel": "channel_cmd", "memory": "memory_cmd",
    "models": "models_cmd", "boards": "boards_cmd", "firmware": "firmware_cmd",
    "doctor": "doctor_cmd", "logs": "logs_cmd", "service": "service_cmd",
    "completion": "completion_cmd", "sensors": "automation_cmd", "rules": "automation_cmd",
    "interlocks": "automation_cmd",
    "schedules": "automation_cmd", "mqtt": "mqtt_cmd", "safe-state": "safe_state_cmd",
    "resume": "resume_cmd", "history": "history_cmd", "mcp": "mcp_cmd", "fleet": "fleet_cmd",
    "camera": "camera_cmd", "backup": "backup_cmd", "web": "web_cmd", "test": "scenario_cmd",
    "approvals": "approvals_cmd",
}
"""Each command and the module under edge.cli that adds it: ``register(subparsers, common)``
sets a ``handler`` default; modules stay light at import time (heavy imports inside handlers).
A command line naming one command builds only its module's parsers (argparse costs about 60 ms
for all of them)."""

VALUED_OPTIONS = ("--config", "--node")

NODE_COMMANDS = frozenset({"status", "pins", "gpio", "sensors", "history"})
"""The commands ``--node NAME`` runs on another node through the broker (:mod:`edge.fleet.remote`)."""

DESCRIPTION = """Run edge-agent and operate it over SSH.

One-shot commands (status, pins, gpio) go through the running agent's control socket when it is
up, and act on the board directly otherwise."""

EPILOG = """examples:
  edge-cli run                     start the agent in the foreground
  edge-cli gpio write led on       switch the 'led' pin on
  edge-cli gpio read led --json    read it, as JSON
  edge-cli config init             write a commented config to edit
  edge-cli fleet                   the nodes on the MQTT broker
  edge-cli --node shed pins        node shed's pins, asked through the broker

exit codes (with --json also the object's exit_code; ok is true only for 0):
""" + "\n".join(f"  {code:<5}{meaning}" for code, meaning in EXIT_CODES.items())


def command_in(argv: list[str]) -> str | None:
    """The command an argument list names (the first word that is not an option)."""
    words = iter(argv)
    for word in words:
        if word in VALUED_OPTIONS:
            next(words, None)
        elif not word.startswith("-"):
            return word
    return None


def help_width() -> int:
    """What argparse wraps help to: $COLUMNS, else the terminal's width, else 80; less 2."""
    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 80
    return max(columns, 20) - 2


def build_parser(command: str | None = None) -> "argparse.ArgumentParser":
    """The parser for every command, or only for ``command``'s module when it is known."""
    import argparse

    def sized(base: "type[argparse.HelpFormatter]") -> "type[argparse.HelpFormatter]":
        """``base`` told the terminal's width by os, not shutil (which imports bz2, lzma and
        zlib: about 3 ms on every command, since argparse builds a formatter per argument)."""

        class Sized(base):  # type: ignore[valid-type,misc]
            def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                         width: int | None = None):
                super().__init__(prog, indent_increment, max_help_position,
                                 width or help_width())

        return Sized

    class Parser(argparse.ArgumentParser):
        """Usage errors become CommandLineError, so that --json can report them as JSON."""

        def __init__(self, *args: "Any", **kwargs: "Any"):
            kwargs["formatter_class"] = sized(kwargs.get("formatter_class", argparse.HelpFormatter))
            super().__init__(*args, **kwargs)

        def error(self, message: str) -> "NoReturn":
            raise CommandLineError(f"{self.prog}: {message}", self.format_usage())

    common = Parser(add_help=False)
    common.add_argument("--config", metavar="PATH", default=argparse.SUPPRESS,
                        help="config file (default: $EDGE_CONFIG, /etc/edge-agent/config.toml, "
                             "~/.config/edge-agent/config.toml)")
    common.add_argument("--json", action="store_true", default=argparse.SUPPRESS,
                        help="print machine-readable JSON")
    common.add_argument("--node", metavar="NAME", default=argparse.SUPPRESS,
                        help="run the command on another node through the broker ([mqtt]): "
                             f"{', '.join(sorted(NODE_COMMANDS))}")

    parser = Parser(prog="edge-cli", description=DESCRIPTION, epilog=EPILOG,
                    formatter_class=argparse.RawDescriptionHelpFormatter, parents=[common])
    parser.add_argument("-V", "--version", action="version", version=f"edge-cli {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    from importlib import import_module

    module = COMMAND_MODULES.get(command or "")
    for name in [module] if module else dict.fromkeys(COMMAND_MODULES.values()):
        import_module(f"edge.cli.{name}").register(sub, common)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv in (["--version"], ["-V"]):  # the fast path: no argparse, nothing else imported
        print(f"edge-cli {__version__}")
        return 0
    if sorted(argv) in (["--json", "--version"], ["--json", "-V"]):
        from edge.cli.output import emit
        from edge.control.ops import OpResult

        return emit(OpResult(True, f"edge-cli {__version__}", {"version": __version__}), True)
    import argparse

    as_json = "--json" in argv
    try:
        # --json, --config and --node may come before or after the command: defaults here, once
        args = build_parser(command_in(argv)).parse_args(
            argv, namespace=argparse.Namespace(json=False, config=None, node=None))
    except CommandLineError as exc:
        return fail(str(exc), EXIT_USAGE, as_json, usage=exc.usage)
    if args.node is not None and args.command not in NODE_COMMANDS:
        return fail(f"--node runs only {', '.join(sorted(NODE_COMMANDS))} on another node, not "
                    f"{args.command}", EXIT_USAGE, args.json)
    handler: Callable[[argparse.Namespace], int] = args.handler  # each command's register sets it
    try:
        return handler(args)
    except EdgeError as exc:
        return fail(str(exc), exc.exit_code, args.json)
    except KeyboardInterrupt:  # Ctrl-C: the shell's 128 + SIGINT, said as JSON too with --json
        if args.json:
            return fail("interrupted (Ctrl-C)", EXIT_INTERRUPTED, True)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # `edge-cli config show | head`
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as exc:  # a file, device or socket the system refused: its words, exit 1
        where = f"{exc.filename}: " if exc.filename else ""
        return fail(f"{where}{exc.strerror or exc}", EXIT_FAILED, args.json)


class CommandLineError(UsageError):
    """A usage error found by argparse (exit 2)."""

    def __init__(self, message: str, usage: str):
        super().__init__(message)
        self.usage = usage


def fail(message: str, code: int, as_json: bool, usage: str = "") -> int:
    """Report an error: one JSON object on stdout with --json (scripts never get empty stdout),
    else the usage (for usage errors) and the message on stderr."""
    if usage and not as_json:
        print(f"{usage}{message}", file=sys.stderr)
        return code
    from edge.cli.output import emit
    from edge.control.ops import OpResult

    return emit(OpResult(False, message, {}, code), as_json)


def skip_httpx_command_line() -> None:
    """httpx imports its command-line client on import, and with it click and pygments wherever
    they happen to be installed: 2 MB and 15 ms that edge-cli never uses. The program (not the
    package: importers of ``edge`` keep their interpreter as it is) marks it absent, and httpx
    falls back to its stub ``httpx.main``."""
    sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]  # None: "absent"


def skip_pydantic_plugins() -> None:
    """pydantic reads every installed distribution's entry points at the first model it builds,
    looking for plugins (about 5 ms of each agent's start and one-shot command); edge-cli uses
    none. Set for the program only, as pydantic documents (``PYDANTIC_DISABLE_PLUGINS``); a value
    already in the environment wins."""
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")


def entry() -> None:
    """What the ``edge-cli`` script (scripts/edge-cli) runs: ``main()``, keeping the code compiled
    from text as modules load for the next run (:mod:`edge.core.code_cache`), then a quick exit
    (it never returns). Every command has closed what it opened by the time it returns, so the
    interpreter's teardown of the modules a run imports (about 100 ms, more than the run's own
    work for a one-shot turn) is skipped: stdio and the log handlers are flushed, then the
    process ends."""
    skip_httpx_command_line()
    skip_pydantic_plugins()
    command = command_in(sys.argv[1:])
    kept: CodeTable | None = None
    if command in COMMAND_MODULES:  # a known word only: it names a file
        from edge.core import code_cache

        kept = code_cache.install(command)
    try:
        code = main()
    except SystemExit as exc:  # argparse's usage errors and --help
        code = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
        if isinstance(exc.code, str):
            print(exc.code, file=sys.stderr)
    if kept is not None:
        kept.save()
    if (logging := sys.modules.get("logging")) is not None:
        logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: nothing more can be said
            continue
    os._exit(code)


if __name__ == "__main__":
    entry()
