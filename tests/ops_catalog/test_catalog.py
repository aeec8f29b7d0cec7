"""The catalog is the one place an operation is written: a walk of the catalog and of its doors.
Each door offers what the catalog declares, under the catalog's names, with its schema and words;
no name, help text or list of operations is written a second time in edge/ (its light CLI client
aside, which names what it asks); the names follow one rule but for the older ones clients use."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest
from mcp.server.mcpserver import MCPServer

from edge.agent.commands import COMMAND_MENU, help_text
from edge.control.ops import OpResult
from edge.fleet.protocol import refusal
from edge.mcp.server import McpCaller, catalog_server
from edge.ops.catalog import (
    CATALOG,
    actuating,
    for_operator,
    over_mcp,
    paired_only,
    remote,
    waits_for_approval,
)
from edge.ops.operation import Kind, door_name
from edge.tools.base import schema_of
from tests.helpers import ROOT

OLDER_TOOL_NAMES = {"pins": "board_status", "gpio.servo": "servo_write", "sensors": "sensor_read",
                    "rules": "rule_list", "interlocks": "interlock_list",
                    "schedules": "schedule_list", "schedules.add": "schedule_add",
                    "schedules.remove": "schedule_remove", "sensors.history": "sensor_history"}
"""The model tools named before the catalog (the model and saved conversations use them)."""
OLDER_MCP_NAMES = {"pins": ("pins_list",), "gpio.read": ("pin_read",), "gpio.write": ("pin_write",),
                   "gpio.pwm": ("pin_pwm",), "gpio.servo": ("servo_angle",),
                   "gpio.safe": ("pin_safe",), "sensors": ("sensor_read", "sensors_list"),
                   "schedules": ("schedules_list",)}
"""The MCP tools named before the catalog (MCP clients' configs and approvals use them)."""


def string_constants(top: Path, leave_out: tuple[str, ...]) -> dict[str, list[str]]:
    """Every string constant in ``top``'s modules (implicit concatenation joined, as Python
    does), with where it is, except in the modules under ``leave_out``."""
    found: dict[str, list[str]] = defaultdict(list)
    for path in sorted(top.rglob("*.py")):
        where = str(path.relative_to(ROOT))
        if where.startswith(leave_out):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                found[node.value].append(f"{where}:{node.lineno}")
    return found


CLIENT = ("edge/cli/", "edge/control/client.py")
"""The light client: it names the operations it asks and has its own argparse help, and never
loads the catalog (``edge-cli status`` stays quick)."""


def test_every_name_is_the_rule_or_an_older_one_clients_use():
    for name, op in CATALOG.items():
        assert op.tool_name == OLDER_TOOL_NAMES.get(name, door_name(name)), name
        if op.mcp_name is not None:
            assert op.mcp_names == OLDER_MCP_NAMES.get(name, (op.tool_name,)), name


def test_no_help_text_is_written_twice():
    texts = {op.description for op in CATALOG.values()}
    for op in CATALOG.values():
        texts |= {field["description"] for field in schema_of(op.args)["properties"].values()
                  if "description" in field}
        texts |= {text for chat in op.chat for text in (chat.usage, chat.help, chat.menu) if text}
    constants = string_constants(ROOT / "edge", CLIENT)
    twice = {text: constants[text] for text in texts if len(constants[text]) > 1}
    assert twice == {}
    assert all(len(constants[text]) == 1 for text in texts)  # and each is written somewhere


def test_no_door_spells_a_tool_or_mcp_name_again():
    """The tool class holds its name, the catalog an MCP name it keeps; everyone else asks the
    catalog (or the class) for it."""
    constants = string_constants(ROOT / "edge", CLIENT)
    for op in CATALOG.values():
        tool = {op.tool_name} if op.tool is not None else set()
        for name in (tool | set(op.mcp_names)) - {op.name}:
            assert len(constants[name]) <= 1, (name, constants[name])


def test_no_second_list_of_operations():
    """No set, list or table outside the catalog holds two operations' names (as ``TOOL_OPS``,
    ``REMOTE_OPS``, ``ACTUATING_OPS``, ``WAITS_FOR_APPROVAL`` and ``UNVERIFIED_OPS`` did)."""
    names = set(CATALOG)
    lists = []
    for path in sorted((ROOT / "edge").rglob("*.py")):
        where = str(path.relative_to(ROOT))
        if where.startswith((*CLIENT, "edge/ops/")):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.Set, ast.List, ast.Tuple)):
                held = {e.value for e in node.elts if isinstance(e, ast.Constant)} & names
                if len(held) > 1 and {n for n in held if "." in n}:
                    lists.append((where, node.lineno, sorted(held)))
    assert lists == []


def test_the_sets_each_door_uses_are_the_catalogs():
    assert remote() == {"status", "pins", "gpio.read", "gpio.write", "gpio.pwm", "gpio.servo",
                        "sensors", "sensors.history", "history"}
    assert actuating() & remote() == {"gpio.write", "gpio.pwm", "gpio.servo"}
    assert for_operator() == {"models.select", "schedules.add", "schedules.remove", "resume",
                              "channel.pair", "web.pair", "web.sessions", "web.revoke",
                              "gpio.simulate", "sensors.simulate", "boards.release",
                              "boards.reattach", "approvals", "approvals.revoke"}
    assert waits_for_approval() == {"gpio.write", "gpio.pwm", "gpio.servo", "gpio.safe",
                                    "schedules.add", "schedules.remove"}
    assert paired_only() == {"status", "history"}
    for name in CATALOG:
        assert (refusal(name) is None) == (name in remote()), name


async def test_mcp_offers_each_operation_with_its_arguments_words_and_hints():
    asked: list[tuple[str, dict]] = []

    async def door(op: str, args: dict, caller: McpCaller) -> OpResult:
        asked.append((op, args))
        return OpResult(True, "done", {"op": op})

    server: MCPServer = catalog_server(door, lambda ctx: McpCaller("mcp:test"))
    listed = {tool.name: tool for tool in await server.list_tools()}
    assert sorted(listed) == sorted(name for op in over_mcp() for name in op.mcp_names)
    for op in over_mcp():
        for name in op.mcp_names:
            tool, wanted = listed[name], schema_of(op.args)
            assert tool.description == op.description
            assert tool.input_schema.get("required", []) == wanted.get("required", [])
            for arg, field in wanted["properties"].items():
                offered = tool.input_schema["properties"][arg]
                assert {k: v for k, v in offered.items() if k != "title"} == field, (name, arg)
            assert tool.annotations.read_only_hint is op.hints.read_only
            assert tool.annotations.open_world_hint is False
    await server.call_tool("pin_pwm", {"pin": "fan", "duty": 0.5})
    await server.call_tool("sensor_history", {"name": "greenhouse"})
    assert asked == [("gpio.pwm", {"pin": "fan", "duty": 0.5}),
                     ("sensors.history", {"name": "greenhouse", "since": "24h", "points": 100})]


def test_chat_lists_every_spelling_and_each_command_once_in_the_menu():
    listed = help_text()
    commands = [command for command, _ in COMMAND_MENU]
    assert len(commands) == len(set(commands))
    for op in CATALOG.values():
        for chat in op.chat:
            assert f"  {chat.usage}" in listed and chat.help in listed
            assert chat.command in commands


@pytest.mark.parametrize("kind", list(Kind))
def test_each_kind_is_used(kind):
    assert any(op.kind is kind for op in CATALOG.values())
