"""``docs/reference/cli.md``: every ``edge-cli`` command's help, from the parser
:func:`edge.cli.main.build_parser` builds, at a fixed width so the page does not depend on the
terminal that wrote it."""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator

from edge.cli.main import build_parser

WIDTH = "100"


def markdown() -> str:
    saved = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = WIDTH
    try:
        parser = build_parser()
        lines = ["# Command line", "",
                 "Every `edge-cli` command and its options, as `edge-cli COMMAND --help` prints them. "
                 "The same options work on every command where they apply: `--config PATH`, "
                 "`--json` (one JSON object: [exit codes and JSON](exit-codes.md)) and `--node NAME` "
                 "([a fleet](../how-to/fleet.md)).", ""]
        for prog, command in commands(parser):
            lines += [f"## {prog}", "", "```text", command.format_help().rstrip(), "```", ""]
    finally:
        if saved is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = saved
    return "\n".join(lines).rstrip("\n") + "\n"


def commands(parser: argparse.ArgumentParser) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """(prog, parser) for ``parser`` and each command below it, in the order they were added;
    an alias is listed once, under its command."""
    yield parser.prog, parser
    seen: set[int] = set()
    for action in parser._actions:  # argparse keeps its subcommands here and nowhere public
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                if id(sub) not in seen:
                    seen.add(id(sub))
                    yield from commands(sub)
