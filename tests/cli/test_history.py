"""``edge-cli history``, ``/history`` and the ``history`` tool answer from the audit trail:
"when did the pump last run, and who started it?" """

from __future__ import annotations

import json
import time
from pathlib import Path

from edge.agent.commands import CommandContext, run_command
from edge.audit import AuditTrail
from edge.core.actuation import Actuation
from edge.core.requester import Requester
from edge.tools.history import HistoryTool
from tests.helpers import cli

HOUR = 3600.0


async def recorded(state: Path) -> Path:
    """Three hours of a small house: the water schedule started the pump, the timer ended it,
    then someone on Telegram switched the fan and was refused the heater."""
    path = state / "audit.db"
    trail = AuditTrail(path)
    now = time.time()
    for actuation in [
        Actuation(at=now - 3 * HOUR, board="gpio", pin="GPIO22", label="pump", action="write",
                  asked=1.0, read_back=1.0, caller="schedule:water", door="schedule", why="water"),
        Actuation(at=now - 3 * HOUR + 60, board="gpio", pin="GPIO22", label="pump",
                  action="auto-off", asked=0.0, read_back=0.0, caller="agent", door="agent",
                  why="auto-off"),
        Actuation(at=now - 60, board="gpio", pin="GPIO23", label="fan", action="write",
                  asked=1.0, read_back=1.0, caller="telegram:42", door="telegram", why="turn 9"),
        Actuation(at=now - 30, board="gpio", pin="GPIO24", label="heater", action="write",
                  asked=1.0, outcome="refused", reason="interlock heat-or-cool",
                  caller="telegram:42", door="telegram", why="turn 9"),
    ]:
        await trail.record(actuation)
    trail.close()
    return path


async def test_edge_cli_history_filters_by_pin_time_and_who(isolated_env: dict[str, str]) -> None:
    await recorded(Path(isolated_env["EDGE_STATE_DIR"]))
    pump = cli("history", "pump", env=isolated_env)
    assert pump.returncode == 0, pump.stderr
    lines = pump.stdout.splitlines()
    assert len(lines) == 2
    assert "pump: on (read back on) by schedule:water (schedule)" in lines[0]
    assert "pump: off (read back off) [auto-off] by agent" in lines[1]

    recent = cli("history", "--since", "2h", env=isolated_env).stdout
    assert "pump" not in recent and "fan: on" in recent
    assert "heater: refused, interlock heat-or-cool" in recent

    out = cli("history", "--who", "telegram:42", "--json", env=isolated_env)
    records = json.loads(out.stdout)["data"]["records"]
    assert [(r["label"], r["outcome"], r["why"]) for r in records] == \
        [("fan", "ok", "turn 9"), ("heater", "refused", "turn 9")]
    assert cli("history", "--who", "schedule", env=isolated_env).stdout.count("\n") == 1


def test_edge_cli_history_without_a_record_says_so(isolated_env: dict[str, str]) -> None:
    out = cli("history", "pump", env=isolated_env)
    assert (out.returncode, out.stdout.strip()) == (0, "No actuations of pump are recorded.")
    bad = cli("history", "--since", "soon", env=isolated_env)
    assert bad.returncode == 2 and "not a duration" in bad.stderr


async def test_the_history_tool_and_chat_command_read_the_record(tmp_path: Path) -> None:
    tool = HistoryTool(await recorded(tmp_path))
    asker = Requester("telegram", "42", "42")
    result = await tool.execute({"pin": "pump", "limit": 1}, asker)
    assert result.success and "auto-off" in result.output and result.data is not None
    assert [r["action"] for r in result.data["records"]] == ["auto-off"]

    async def status(**_: object) -> str:
        return ""
    ctx = CommandContext({"history": tool}, status, asker, admins={"telegram": frozenset({"42"})})
    reply = await run_command("/history pump", ctx)  # an admin sees every caller
    assert reply is not None and "by schedule:water" in reply
    assert "heater: refused" in (await run_command("/history", ctx) or "")


async def test_a_person_who_is_no_admin_sees_their_own_calls_and_no_one_elses_id(
        tmp_path: Path) -> None:
    """Telegram user 7 switched the fan once; the admin 42 and the local operator (whose
    account name is the why of a ``local`` call) switched it too, and the timer ended it."""
    path = await recorded(tmp_path)
    trail = AuditTrail(path)
    now = time.time()
    for actuation in [
        Actuation(at=now - 20, board="gpio", pin="GPIO23", label="fan", action="write",
                  asked=0.0, read_back=0.0, caller="telegram:7", door="telegram", why="turn 3"),
        Actuation(at=now - 10, board="gpio", pin="GPIO23", label="fan", action="write",
                  asked=1.0, read_back=1.0, caller="local:1000", door="local", why="alice"),
        Actuation(at=now - 5, board="gpio", pin="GPIO23", label="fan", action="auto-off",
                  asked=0.0, read_back=0.0, caller="agent", door="agent", why="auto-off"),
    ]:
        await trail.record(actuation)
    trail.close()

    async def status(**_: object) -> str:
        return ""
    admins = {"telegram": frozenset({"42"})}
    tool = HistoryTool(path, admins)  # as the agent builds it: with the admins of its channels
    person = CommandContext({"history": tool}, status,
                            Requester("telegram", "7", "7"), admins=admins)
    reply = await run_command("/history", person) or ""
    lines = reply.splitlines()
    assert len(lines) == 4, reply  # the fan: 42's switch, theirs, the operator's, the timer's
    assert "fan: off (read back off) by telegram:7" in lines[1]
    assert "by someone else" in lines[0] and "by someone else" in lines[2]
    assert "[auto-off] by agent" in lines[3]
    for withheld in ("telegram:42", "turn 9", "local", "alice", "1000", "pump", "heater",
                     "schedule"):
        assert withheld not in reply, withheld
    # the model asking for them reads the same part of the trail, however it asks
    asked = await tool.execute({"who": "local:1000", "limit": 200},
                               Requester("telegram", "7", "7").asking_model())
    assert asked.success and asked.data == {"records": []}, asked
    asked = await tool.execute({}, Requester("telegram", "7", "7").asking_model())
    assert asked.data is not None and len(asked.data["records"]) == 4
    for withheld in ("telegram:42", "local", "alice", "1000"):
        assert withheld not in asked.output and withheld not in str(asked.data), withheld
    stranger = CommandContext({"history": tool}, status,
                              Requester("telegram", "8", "8"), admins=admins)
    assert "You have not switched anything" in (await run_command("/history", stranger) or "")
    admin = CommandContext({"history": tool}, status,
                           Requester("telegram", "42", "42"), admins=admins)
    assert "by local:1000 (local, alice)" in (await run_command("/history fan", admin) or "")


def test_a_one_shot_edge_cli_without_an_agent_is_recorded_too(isolated_env: dict[str, str]) -> None:
    held = cli("gpio", "write", "led", "on", "--hold", "0.1", env=isolated_env)
    assert held.returncode == 0, held.stderr
    refused = cli("gpio", "write", "led", "on", env=isolated_env)  # the Pi keeps no level alone
    assert refused.returncode == 1
    out = cli("history", "led", "--json", env=isolated_env)
    rows = [(r["action"], r["asked"], r["read_back"], r["outcome"], r["door"])
            for r in json.loads(out.stdout)["data"]["records"]]
    assert rows == [("write", 1.0, 1.0, "ok", "cli"), ("safe", 0.0, 0.0, "ok", "cli"),
                    ("write", 1.0, None, "refused", "cli")]
