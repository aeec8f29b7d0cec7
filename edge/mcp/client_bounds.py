"""What a server's tool list and results may cost the model: the caps of its ``[[mcp.servers]]``.

A server's listing is read up to ``max_tools`` tools. Of the allowed ones, a tool whose input
schema (as JSON) is over ``max_schema_bytes`` is left out, and so is each one past
``max_schema_total_bytes`` of them together (every model request carries them all, whether the
turn uses them or not). Each leaves a warning, which status and doctor show. A result is cut to
``max_result_bytes`` for the model, saying how much was cut.

>>> cut("abcdef", 4)
'abcd\\n[cut: 2 more bytes]'
>>> cut("añb", 2)  # never half a character
'a\\n[cut: 3 more bytes]'
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from mcp_types import Tool

from edge.config.mcp import McpServerConfig


@dataclass(frozen=True)
class RemoteToolInfo:
    """One tool as the server lists it."""

    name: str
    description: str
    input_schema: dict[str, Any]
    read_only: bool
    """The server marks it ``readOnlyHint: true`` (MCP's default is false)."""

    @classmethod
    def of(cls, tool: Tool) -> RemoteToolInfo:
        hints = tool.annotations
        return cls(tool.name, tool.description or tool.title or "", dict(tool.input_schema),
                   bool(hints is not None and hints.read_only_hint))


@dataclass(frozen=True)
class Listing:
    """The tools kept, the allowed ones left out (name -> why), and the warnings."""

    tools: dict[str, RemoteToolInfo]
    left_out: dict[str, str]
    warnings: list[str]


def admit(listed: list[Tool], config: McpServerConfig, more: bool = False) -> Listing:
    """The server's tools within ``config``'s caps; ``more``: it listed past ``max_tools``."""
    warnings: list[str] = []
    if more or len(listed) > config.max_tools:
        warnings.append(f"it lists more than {config.max_tools} tools (max_tools): the rest "
                        "were not read")
    tools: dict[str, RemoteToolInfo] = {}
    left_out: dict[str, str] = {}
    total = 0
    allowed = set(config.allow)
    for tool in listed[:config.max_tools]:
        info = RemoteToolInfo.of(tool)
        if tool.name not in allowed:  # never offered: its schema is not kept
            tools[tool.name] = RemoteToolInfo(info.name, "", {}, info.read_only)
            continue
        size = len(json.dumps(info.input_schema, separators=(",", ":")).encode())
        if size > config.max_schema_bytes:
            why = (f"its input schema is {size} bytes, over max_schema_bytes "
                   f"{config.max_schema_bytes}")
        elif total + size > config.max_schema_total_bytes:
            why = (f"its input schema ({size} bytes) would take the server's allowed tools "
                   f"past max_schema_total_bytes {config.max_schema_total_bytes}")
        else:
            total += size
            tools[tool.name] = info
            continue
        left_out[tool.name] = why
        warnings.append(f"{tool.name} left out: {why}")
    return Listing(tools, left_out, warnings)


def cut(text: str, limit: int) -> str:
    """``text`` within ``limit`` bytes of UTF-8, saying how many more there were."""
    data = text.encode()
    if len(data) <= limit:
        return text
    kept = data[:limit].decode("utf-8", "ignore")
    return f"{kept}\n[cut: {len(data) - len(kept.encode())} more bytes]"
