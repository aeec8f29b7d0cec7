"""Automation tools: ``rule_list`` (and the schedule tools): what the rules are, what they did
and when, for the model, chat (``/rules``) and ``edge-cli rules``."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from edge.automation.assembly import Automation
from edge.automation.engine import RuleEngine
from edge.requester import Requester
from edge.tools.base import ModelTool, Tool, ToolResult
from edge.tools.sensors import SensorReadTool


class NoArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")


def format_rules(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "No rules configured (add [[rules]] entries)."
    lines = []
    for row in rows:
        state = "" if row["enabled"] else " (disabled)"
        fired = f"fired {row['fired']}x" + (f", last {row['last_fired_ago']:g} s ago"
                                            if row["last_fired_ago"] is not None else "")
        if row["suppressed"]:
            fired += f", {row['suppressed']} held back by the cooldown"
        lines.append(f"{row['name']}{state}: when {row['when']} -> {'; '.join(row['then'])} "
                     f"({fired})")
        if row["on_clear"]:
            lines.append(f"  on clear -> {'; '.join(row['on_clear'])}")
        if row["last_error"]:
            lines.append(f"  last error: {row['last_error']}")
    return "\n".join(lines)


class RuleListTool(ModelTool[NoArgs]):
    name = "rule_list"
    description = ("List the automation rules: trigger, actions, how often each fired and its "
                   "last result or error.")
    Params = NoArgs

    def __init__(self, rules: RuleEngine):
        self.rules = rules

    async def run(self, params: NoArgs, requester: Requester) -> ToolResult:
        rows = self.rules.rows()
        return ToolResult(True, format_rules(rows), data={"rules": rows})


def automation_tools(automation: Automation) -> list[Tool]:
    """The tools over the sensors, rules and schedules."""
    return [SensorReadTool(automation.sensors), RuleListTool(automation.rules)]
