"""The reference of every operation, written from the catalog: ``docs/reference/operations.md``.

    python -m edge.ops.reference > docs/reference/operations.md

A test regenerates it and fails, naming that command, when the committed page is stale.
"""

from __future__ import annotations

import json
from typing import Any

from edge.ops.catalog import CATALOG
from edge.ops.operation import Hints, Operation
from edge.tools.base import schema_of

COMMAND = "python -m edge.ops.reference > docs/reference/operations.md"
BOUNDS = {"minimum": ">=", "exclusiveMinimum": ">", "maximum": "<=", "exclusiveMaximum": "<",
          "minLength": "length >=", "maxLength": "length <="}


def markdown() -> str:
    lines = ["# Operations", "",
             f"<!-- generated from edge/ops/catalog.py by `{COMMAND}`; do not edit -->", "",
             "Each operation is declared once (`edge/ops/catalog.py`) and offered through every "
             "door it names: the control socket and `edge-cli` (its name), the model (its tool), "
             "MCP, the fleet (remote) and chat.", "",
             "| operation | kind | model tool | MCP | remote | chat |",
             "|---|---|---|---|---|---|"]
    for op in CATALOG.values():
        chat = "<br>".join(f"`{cell(spelling.usage)}`" for spelling in op.chat)
        mcp = ", ".join(f"`{name}`" for name in op.mcp_names)
        tool = f"`{op.tool_name}`" if op.tool is not None else ""
        lines.append(f"| [`{op.name}`](#{anchor(op.name)}) | {op.kind.value} | {tool} | {mcp} | "
                     f"{'yes' if op.remote else ''} | {chat} |")
    for op in CATALOG.values():
        lines += ["", *section(op)]
    return "\n".join(lines) + "\n"


def cell(text: str) -> str:
    """``text`` in a table's cell, whose column bar it must not hold."""
    return text.replace("|", "\\|")


def anchor(name: str) -> str:
    return name.replace(".", "")


def section(op: Operation) -> list[str]:
    lines = [f"## {op.name}", "", op.description, ""]
    if op.mcp_names:
        lines += [f"MCP: {', '.join(f'`{name}`' for name in op.mcp_names)} "
                  f"({hints_words(op.hints)}).", ""]
    for spelling in op.chat:
        lines += [f"Chat: `{spelling.usage}`: {spelling.help}.", ""]
    properties: dict[str, Any] = schema_of(op.args).get("properties", {})
    if not properties:
        return [*lines, "No arguments."]
    required = set(schema_of(op.args).get("required", []))
    lines += ["| argument | type | default | help |", "|---|---|---|---|"]
    for name, prop in properties.items():
        default = "required" if name in required else f"`{json.dumps(prop.get('default'))}`"
        lines.append(f"| `{name}` | {type_words(prop)} | {default} | "
                     f"{cell(prop.get('description', ''))} |")
    return lines


def type_words(prop: dict[str, Any]) -> str:
    if "enum" in prop:
        return " or ".join(f"`{value}`" for value in prop["enum"])
    if "anyOf" in prop:
        return " or ".join(type_words(one) for one in prop["anyOf"])
    bounds = [f"{word} {prop[key]}" for key, word in BOUNDS.items() if key in prop]
    return str(prop.get("type", "any")) + (f" ({', '.join(bounds)})" if bounds else "")


def hints_words(hints: Hints) -> str:
    if hints.read_only:
        return "read-only"
    words = ["destructive" if hints.destructive else "not destructive"]
    words.append("idempotent" if hints.idempotent else "not idempotent")
    return ", ".join(words)


if __name__ == "__main__":
    print(markdown(), end="")
