"""``docs/reference/exit-codes.md`` (exit codes and the ``--json`` contract, from
:data:`edge.core.exc.EXIT_CODES` and :class:`edge.ops.result.OpResult`),
``docs/reference/errors.md`` (the error trees drawn in :mod:`edge.core.exc` and
:mod:`peripherals.exc`, which ``tests/test_exceptions.py`` holds to the classes) and
``docs/reference/mcp-tools.md`` (the catalog's MCP names)."""

from __future__ import annotations

import inspect
import json

import peripherals.exc
from edge.core import exc
from edge.core.exc import EXIT_CODES
from edge.ops.catalog import CATALOG
from edge.ops.reference import anchor, cell, hints_words
from edge.ops.result import OpResult


def exit_codes() -> str:
    lines = ["# Exit codes and JSON", "",
             "Every exit code of `edge-cli` (`edge-cli --help` prints the same table):", "",
             "| code | meaning |", "|---|---|"]
    lines += [f"| `{code}` | {meaning} |" for code, meaning in EXIT_CODES.items()]
    lines += ["", "`edge-cli run` exits 128 + N when an unexpected signal N stopped it, its outputs "
              "driven safe first.", "",
              "## The JSON contract", "",
              "With `--json`, every outcome (errors and usage errors included) prints one JSON "
              "object on stdout: " + " ".join(inspect.cleandoc(OpResult.as_dict.__doc__ or "").split())
              + " `ok` is true exactly when the exit code is 0. A command that asked another node "
              "through the broker adds `via`.", "",
              "A success:", "", "```json",
              json.dumps(OpResult(True, "gpio:GPIO22 (pump) set on",
                                  {"pin": "pump", "value": 1}).as_dict(), indent=2, sort_keys=True),
              "```", "", "A refusal:", "", "```json",
              json.dumps(OpResult(False, "pump: refused by interlock dry-run (tank_low is on)").as_dict(),
                         indent=2, sort_keys=True),
              "```"]
    return "\n".join(lines) + "\n"


def errors() -> str:
    lines = ["# Errors", "",
             "Every error the agent raises, drawn by inheritance: `Name(Builtin)` when a builtin is "
             "mixed in, `[module]` when the class lives outside the tree's own module, then when it is "
             "raised. Each message says what to do next. `except EdgeError` catches whatever the agent "
             "refused or failed to do, never a bug.", "",
             "## The agent (`edge.core.exc`)", "", "```text", drawing(exc.__doc__), "```", "",
             "## Boards and sensors (`peripherals.exc`)", "", "```text",
             drawing(peripherals.exc.__doc__), "```"]
    return "\n".join(lines) + "\n"


def drawing(doc: str | None) -> str:
    """The indented tree after the ``::`` of a module's docstring."""
    text = inspect.cleandoc(doc or "")
    block = text.split("::\n\n", 1)[1].split("\n\n", 1)[0]
    return inspect.cleandoc(block)


def mcp_tools() -> str:
    lines = ["# MCP tools", "",
             "What an MCP client (Claude Desktop, Claude Code) can call on `edge-cli mcp` or the "
             "`[mcp]` HTTP server: each tool is an operation of the catalog, through the same door, "
             "policy and approvals as every other caller. Arguments: [Operations](operations.md).", "",
             "| MCP tool | operation | hints | what |", "|---|---|---|---|"]
    for op in CATALOG.values():
        for name in op.mcp_names:
            lines.append(f"| `{name}` | [`{op.name}`](operations.md#{anchor(op.name)}) | "
                         f"{hints_words(op.hints)} | {cell(op.description)} |")
    return "\n".join(lines) + "\n"
