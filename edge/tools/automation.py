"""Automation tools for the model, chat (``/rules``, ``/schedule``) and ``edge-cli rules`` /
``schedules``: ``rule_list``; ``schedule_list``, ``schedule_add``, ``schedule_remove``.

Adding or removing a schedule changes the agent for everyone, so it is for admins (and the local
operator); when the model asks under ``supervised`` autonomy, the person approves it first. What
a job then does goes through the policy as ``schedule:NAME`` every time it runs."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from edge.config.schedules import ScheduleConfig
from edge.core.exc import PolicyDenied
from edge.core.localtime import local_time
from edge.core.requester import Requester
from edge.status_lines import ago, times
from edge.tools.base import ModelTool, P, Tool, ToolArgs, ToolResult
from edge.tools.sensors import SensorReadTool

if TYPE_CHECKING:  # what the tools act on: the catalog describes them without loading it
    from edge.automation.assembly import Automation
    from edge.automation.engine import RuleEngine
    from edge.automation.interlocks import Interlocks
    from edge.security.approvals import ApprovalGate


class NoArgs(ToolArgs):
    """No arguments: any given is refused."""


def format_rules(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "No rules configured (add [[rules]] entries)."
    lines = []
    for row in rows:
        state = "" if row["enabled"] else " (disabled)"
        count = row["fired"]
        fired = "never fired" if not count else (
            f"fired {times(count)}, last {ago(row['last_fired_ago'])}")
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


class InterlockListTool(ModelTool[NoArgs]):
    name = "interlock_list"
    description = ("List the interlocks (what the door to the pins refuses, and when): each with "
                   "its condition's state now and whether it has tripped.")
    Params = NoArgs

    def __init__(self, interlocks: Interlocks):
        self.interlocks = interlocks

    async def run(self, params: NoArgs, requester: Requester) -> ToolResult:
        rows = self.interlocks.rows()
        return ToolResult(True, interlocks_text(rows), data={"interlocks": rows})


def format_schedules(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "No schedules (add [[schedules]] entries, or /schedule add)."
    lines = []
    for row in rows:
        why = row.get("disabled_reason")
        state = f" (disabled: {why})" if why else "" if row["enabled"] else " (disabled)"
        added = f", added by {row['added_by']}" if row["source"] == "runtime" else ""
        zone, seconds = row["timezone"], row.get("to_the_second", False)
        when = f"next {local_time(row['next_run'], zone, seconds)}" if row["next_run"] else \
            "no next run"
        last = (f", last {local_time(row['last_run'], zone, seconds)}: {row['last_result']}"
                if row["last_run"] else "")
        lines.append(f"{row['name']}{state}: {row['spec']} ({row['timezone']}) -> "
                     f"{row['action']}; {when}{last}{added}")
    return "\n".join(lines)


class _ScheduleTool(ModelTool[P]):
    def __init__(self, automation: Automation):
        self.automation = automation


class ScheduleChange(_ScheduleTool[P]):
    """Adds or removes a job: for admins, approved first when the model proposes it."""

    def __init__(self, automation: Automation, approvals: ApprovalGate):
        super().__init__(automation)
        self.approvals = approvals


class ScheduleListTool(_ScheduleTool[NoArgs]):
    name = "schedule_list"
    description = "List the scheduled jobs: when each runs next, its action and its last result."
    Params = NoArgs

    async def run(self, params: NoArgs, requester: Requester) -> ToolResult:
        rows = self.automation.schedule_rows()
        return ToolResult(True, format_schedules(rows), data={"schedules": rows})


class ScheduleArgs(ToolArgs):
    name: str = Field(description="A short name: letters, digits, - and _")
    cron: str | None = Field(default=None, description="Five-field cron expression, e.g. '0 6 * * *'")
    every: str | None = Field(default=None, description="An interval from 1s to 10 years, such as "
                              "'10m', '1h30m'")
    at: str | None = Field(default=None, description="Once, at a local time '2026-12-01 06:00'")
    timezone: str = Field(default="", description="IANA zone, e.g. 'Europe/Berlin'; empty: the Pi's")
    catch_up: Literal["skip", "once"] = "skip"
    action: str = Field(description="What to do, e.g. 'gpio write pump on for 30s', "
                        "'notify Water the seedlings', 'sensor read greenhouse'")


def _admin_only(requester: Requester, gate: ApprovalGate, what: str) -> None:
    if not gate.is_admin(requester):
        raise PolicyDenied(f"{what} changes the agent for everyone: only an admin (or the local "
                           f"operator) may; {requester.caller} is not one")


class ScheduleAddTool(ScheduleChange[ScheduleArgs]):
    name = "schedule_add"
    description = ("Add a scheduled job (cron, every or at) whose action runs through the same "
                   "policy as a chat command. Admins only; the person is asked to approve.")
    Params = ScheduleArgs

    async def run(self, params: ScheduleArgs, requester: Requester) -> ToolResult:
        gate = self.approvals
        _admin_only(requester, gate, "adding a schedule")
        job = ScheduleConfig.checked(**params.model_dump())  # a UsageError is the tool's failed result
        if gate.needs_approval(requester):
            refusal = await gate.check(f"schedule:{job.name}", "schedule",
                                       f"add schedule {job.name}: {job.spec} -> {job.action}",
                                       requester)
            if refusal is not None:
                raise PolicyDenied(f"schedule {job.name}: {refusal}")
        added = self.automation.add_schedule(job, requester.caller)
        rows = [r for r in self.automation.schedule_rows() if r["name"] == added.name]
        return ToolResult(True, f"added: {format_schedules(rows)}", data={"schedule": rows[0]})


class ScheduleNameArgs(ToolArgs):
    name: str = Field(description="The schedule's name")


class ScheduleRemoveTool(ScheduleChange[ScheduleNameArgs]):
    name = "schedule_remove"
    description = "Remove a scheduled job that was added at runtime (admins only)."
    Params = ScheduleNameArgs

    async def run(self, params: ScheduleNameArgs, requester: Requester) -> ToolResult:
        gate = self.approvals
        _admin_only(requester, gate, "removing a schedule")
        if gate.needs_approval(requester):
            refusal = await gate.check(f"schedule:{params.name}", "schedule",
                                       f"remove schedule {params.name}", requester)
            if refusal is not None:
                raise PolicyDenied(f"schedule {params.name}: {refusal}")
        self.automation.remove_schedule(params.name, requester.caller)
        return ToolResult(True, f"removed schedule {params.name}", data={"name": params.name})


def automation_tools(automation: Automation, approvals: ApprovalGate) -> list[Tool]:
    """The tools over the sensors, rules and schedules; ``approvals`` (the agent's gate) says
    who is an admin and asks whoever proposes a schedule through the model."""
    return [SensorReadTool(automation.sensors), RuleListTool(automation.rules),
            InterlockListTool(automation.interlocks),
            ScheduleListTool(automation), ScheduleAddTool(automation, approvals),
            ScheduleRemoveTool(automation, approvals)]


def interlocks_text(rows: Iterable[dict[str, Any]]) -> str:
    """The interlocks as lines of text (``/interlocks``, ``edge-cli interlocks``)."""
    lines = []
    for row in rows:
        state = ""
        if row["active"] is not None:
            state = f": holding ({row['why']})" if row["active"] else ": clear"
        elif row["on"] is not None:
            state = f": on now {', '.join(row['on']) or 'none'}"
        tripped = f"  TRIPPED ({row['tripped']})" if row["tripped"] else ""
        lines.append(f"{row['name']}: {row['rule']}{state}{tripped}")
    return "\n".join(lines) or "No interlocks configured (add [[interlocks]] sections)."
