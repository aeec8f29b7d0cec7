"""The automation tools: who may add and remove schedules, approvals when the model proposes one,
and chat's /schedule and /sensors commands over the same tools."""

from __future__ import annotations

import asyncio

import pytest

from edge.agent.commands import CommandContext, run_command
from edge.automation.assembly import Automation
from edge.config.loader import load_config
from edge.core.requester import Requester
from edge.hardware import build_hardware
from edge.security.approvals import ApprovalGate, Decision
from edge.tools.automation import automation_tools, format_rules, format_schedules

CONFIG = """
[security]
autonomy = "supervised"
[channels.telegram]
bot_token = "1:x"
allowed_users = ["42", "43"]
admins = ["42"]
[[schedules]]
name = "water"
cron = "0 6 * * *"
action = "gpio write led on"
"""
ADMIN, USER = Requester("telegram", "42", "42"), Requester("telegram", "43", "43")


@pytest.fixture
def tools(tmp_path, write_config, isolated_env, mock_factory):
    cfg = load_config(str(write_config(CONFIG)), env=isolated_env).config
    gate = ApprovalGate.from_config(cfg.security, {"telegram": frozenset({"42"})})
    hw = build_hardware(cfg, resident=True, pin_factory=mock_factory, approvals=gate)
    auto = Automation(cfg, hw, pin_factory=mock_factory, state_dir=tmp_path)
    return {t.name: t for t in automation_tools(auto, gate)}, auto, gate


def approver(gate, decision):
    asked = []

    class Approver:
        supports_approvals = True

        async def request_approval(self, ctx, prompt, token):
            asked.append(prompt)
            asyncio.get_running_loop().call_soon(
                lambda: gate.answer("telegram", token, ctx.sender, decision))

    gate.approvers = {"telegram": Approver()}
    return asked


JOB = {"name": "blink", "every": "10m", "action": "gpio write led off"}


async def test_only_admins_add_schedules(tools):
    tool_set, auto, gate = tools
    refused = await tool_set["schedule_add"].execute(JOB, USER)
    assert not refused.success and "only an admin" in refused.error
    added = await tool_set["schedule_add"].execute(JOB, ADMIN)  # a direct command: no approval
    assert added.success, added.error
    assert [r["name"] for r in auto.schedule_rows()] == ["water", "blink"]


@pytest.mark.parametrize("decision, ok", [(Decision.APPROVE, True), (Decision.DENY, False)])
async def test_a_schedule_the_model_proposes_waits_for_approval(tools, decision, ok):
    tool_set, auto, gate = tools
    asked = approver(gate, decision)
    result = await tool_set["schedule_add"].execute(JOB, ADMIN.asking_model())
    assert asked == ["Approve: add schedule blink: every 10m -> gpio write led off?"]
    assert result.success is ok, result.error
    assert ("blink" in [r["name"] for r in auto.schedule_rows()]) is ok


async def test_a_schedule_the_policy_forbids_is_not_added(tools):
    tool_set, auto, gate = tools
    result = await tool_set["schedule_add"].execute(
        {"name": "x", "every": "1h", "action": "gpio write GPIO5 on"}, ADMIN)
    assert not result.success and "GPIO5 is not in the allowlist" in result.error
    assert [r["name"] for r in auto.schedule_rows()] == ["water"]


@pytest.mark.parametrize("job, error", [
    ({"name": "x", "action": "notify hi"},
     "schedule 'x': give exactly one of cron, every or at (got none)"),
    ({"name": "x", "cron": "0 6 * * *", "every": "1h", "action": "notify hi"},
     "schedule 'x': give exactly one of cron, every or at (got cron, every)"),
    ({"name": "two words", "every": "1h", "action": "notify hi"},
     "name: 'two words': use letters, digits, '_' and '-'"),
])
async def test_a_schedule_that_does_not_hold_is_refused_in_its_own_words(tools, job, error):
    tool_set, auto, gate = tools
    result = await tool_set["schedule_add"].execute(job, ADMIN)
    assert not result.success and result.error.startswith(error), result.error
    assert [r["name"] for r in auto.schedule_rows()] == ["water"]


async def test_config_jobs_are_removed_in_config(tools):
    tool_set, _, _ = tools
    result = await tool_set["schedule_remove"].execute({"name": "water"}, ADMIN)
    assert not result.success and "in the config file" in result.error


async def test_chat_schedule_commands(tools):
    tool_set, auto, gate = tools

    def ctx(who):
        return CommandContext(tool_set, None, who, admins=gate.admins)

    reply = await run_command("/schedule add tea at 2099-01-01 16:00 notify tea time", ctx(ADMIN))
    assert reply.startswith("added: tea: at 2099-01-01 16:00"), reply
    assert "only an admin" in await run_command("/schedule remove tea", ctx(USER))
    listing = await run_command("/schedule", ctx(USER))
    assert "water: cron 0 6 * * *" in listing and "tea: at 2099-01-01 16:00" in listing
    assert await run_command("/schedule remove tea", ctx(ADMIN)) == "removed schedule tea"
    assert (await run_command("/schedule add oops", ctx(ADMIN))).startswith("Usage: /schedule")
    assert "No sensors configured" in await run_command("/sensors", ctx(USER))


async def test_runtime_schedules_are_capped(tools, monkeypatch):
    from edge.automation import assembly

    tool_set, auto, gate = tools
    monkeypatch.setattr(assembly, "MAX_RUNTIME_SCHEDULES", 2)
    for name in ("a", "b"):
        assert (await tool_set["schedule_add"].execute({**JOB, "name": name}, ADMIN)).success
    refused = await tool_set["schedule_add"].execute({**JOB, "name": "c"}, ADMIN)
    assert not refused.success and "already 2 schedules" in refused.error


def job_row(name, spec, next_run, last_run=None, to_the_second=False):
    return {"name": name, "spec": spec, "timezone": "Europe/Berlin", "action": "notify hi",
            "enabled": True, "source": "config", "next_run": next_run, "last_run": last_run,
            "last_result": "ok", "to_the_second": to_the_second}


def test_the_schedule_listing_shows_a_short_every_job_to_the_second():
    text = format_schedules([
        job_row("tick", "every 30s", "2026-11-25T05:00:30+00:00", "2026-11-25T05:00:00+00:00", True),
        job_row("water", "cron 0 6 * * *", "2026-11-25T05:00:00+00:00")])
    assert text.splitlines() == [
        "tick: every 30s (Europe/Berlin) -> notify hi; next 2026-11-25 06:00:30 CET, "
        "last 2026-11-25 06:00:00 CET: ok",
        "water: cron 0 6 * * * (Europe/Berlin) -> notify hi; next 2026-11-25 06:00 CET"]


def test_the_rule_listing_says_how_long_ago_in_words():
    def rule(fired, ago):
        return {"name": "lamp", "enabled": True, "fired": fired, "last_fired_ago": ago,
                "suppressed": 0, "when": "dark", "then": ["gpio write led on"], "on_clear": [],
                "last_error": None}

    assert format_rules([rule(1, 0.0029)]) == \
        "lamp: when dark -> gpio write led on (fired once, last just now)"
    assert format_rules([rule(3, 125.2)]) == \
        "lamp: when dark -> gpio write led on (fired 3 times, last 2 min 5 s ago)"
