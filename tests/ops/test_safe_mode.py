"""A crash loop's brake: three abnormal ends within ten minutes and the next start is in safe mode
(pins safe, rules and schedules held, model turns refused) until ``edge-cli resume`` or an admin's
``/resume``; a clean stop never counts."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from edge.safe_mode import SILENT_END, RunLedger
from tests.fakes.inprocess import RunningAgent
from tests.fakes.openai_server import OpenAIServer, completion
from tests.helpers import cli, msg, start_agent, wait_for

SWITCHES_LED = """
[[schedules]]
name = "lamp"
every = "1s"
action = "gpio write led on"
"""


@pytest.fixture
def env(isolated_env: dict[str, str], write_config: Callable[[str], Path]) -> dict[str, str]:
    """The simulated board (led safe off) and a schedule that would switch the led on each second."""
    return {**isolated_env, "EDGE_CONFIG": str(write_config(SWITCHES_LED))}


def led(env: dict[str, str]) -> float:
    out = cli("gpio", "read", "led", "--json", env=env)
    data = json.loads(out.stdout)
    assert data["via"] == "daemon", out.stderr
    return float(data["data"]["value"])


def safe_mode(env: dict[str, str]) -> dict[str, object] | None:
    status = json.loads(cli("status", "--json", env=env).stdout)["data"]
    assert status["daemon"]["running"]
    return status["safe_mode"]  # type: ignore[no-any-return]


def stop(proc: subprocess.Popen[str], signum: int = signal.SIGTERM) -> str:
    """Send ``signum``; the agent's log (its stderr)."""
    if proc.poll() is None:
        proc.send_signal(signum)
    return str(proc.communicate(timeout=20)[1])


def kill(proc: subprocess.Popen[str], env: dict[str, str]) -> None:
    """SIGKILL: nothing of the agent runs, its socket stays behind (the next start claims it)."""
    stop(proc, signal.SIGKILL)
    (Path(env["EDGE_STATE_DIR"]) / "control.sock").unlink()  # so start_agent waits for the new one


def killed_runs(state: Path, count: int) -> None:
    """``count`` runs that were killed without a word, as the ledger finds them."""
    ledger = RunLedger.in_state_dir(state)
    for _ in range(count):
        ledger.begin(pid=1)


def test_three_kills_in_ten_minutes_start_in_safe_mode_until_edge_cli_resume(env: dict[str, str]) -> None:
    for _ in range(3):
        kill(start_agent(env), env)
    proc = start_agent(env)
    try:
        held = safe_mode(env)
        assert held is not None and held["ends"] == 3 and held["reason"] == SILENT_END
        text = cli("status", env=env).stdout
        assert "SAFE MODE since" in text and "edge-cli resume" in text
        time.sleep(1.5)  # the schedule would have switched the led by now
        assert led(env) == 0.0
        out = cli("resume", "--json", env=env)
        assert out.returncode == 0 and json.loads(out.stdout)["via"] == "daemon", out.stderr
        assert safe_mode(env) is None
        wait_for(lambda: led(env) == 1.0, timeout=10)  # the schedule runs again
    finally:
        err = stop(proc)
    held_part, _, resumed_part = err.partition("event=safe_mode_left by=cli:")
    assert "event=safe_mode ends=3" in held_part and resumed_part
    # no actuation by the schedule while held (other lines may name it: the clean-clone CI run
    # once found the caller elsewhere in the held log while the led stayed off, checked above)
    assert "value=on by=schedule:lamp" not in held_part
    assert "value=on by=schedule:lamp" in resumed_part


def test_a_clean_stop_never_counts(env: dict[str, str]) -> None:
    for _ in range(3):
        stop(start_agent(env))  # SIGTERM: outputs safe, run marked clean
    proc = start_agent(env)
    try:
        assert safe_mode(env) is None
    finally:
        stop(proc)
    runs = json.loads((Path(env["EDGE_STATE_DIR"]) / "runs.json").read_text())["runs"]
    assert [r["state"] for r in runs] == ["clean"] * 4
    assert oct((Path(env["EDGE_STATE_DIR"]) / "runs.json").stat().st_mode & 0o777) == "0o600"


def test_edge_cli_resume_without_an_agent_makes_the_next_start_normal(env: dict[str, str]) -> None:
    killed_runs(Path(env["EDGE_STATE_DIR"]), 3)
    out = cli("resume", "--json", env=env)
    assert out.returncode == 0 and json.loads(out.stdout)["via"] == "direct", out.stderr
    proc = start_agent(env)
    try:
        assert safe_mode(env) is None
    finally:
        stop(proc)


def test_ends_outside_the_window_or_forgiven_do_not_count(tmp_path: Path) -> None:
    ledger = RunLedger(tmp_path / "runs.json")
    for t in (0.0, 500.0, 600.0):
        ledger.begin(pid=1, now=t)  # each killed without a word
    assert ledger.begin(pid=1, now=700.0) is None  # the run of 0 s is outside the ten minutes
    cause = ledger.begin(pid=1, now=710.0)
    assert cause is not None and cause.ends == 3 and cause.reason == SILENT_END
    ledger.forgive(now=720.0)
    assert ledger.begin(pid=1, now=730.0) is None


def test_a_crash_counts_with_its_error_and_a_clean_stop_forgives_nothing(tmp_path: Path) -> None:
    ledger = RunLedger(tmp_path / "runs.json")
    for _ in range(3):
        ledger.begin(pid=1)
        ledger.end(error="RuntimeError: boom")  # an exception escaped Runtime.run
    cause = ledger.begin(pid=1)
    assert cause is not None and cause.ends == 3 and cause.reason == "RuntimeError: boom"
    ledger.end()  # the safe run stops cleanly: the crashes still count until resumed
    assert ledger.begin(pid=1) is not None


async def test_safe_mode_refuses_model_turns_and_only_an_admin_resumes(
        start_agent: Callable[[str], Awaitable[RunningAgent]], isolated_env: dict[str, str]) -> None:
    killed_runs(Path(isolated_env["EDGE_STATE_DIR"]), 3)
    with OpenAIServer([(200, completion("hello again"))]) as server:
        agent = await start_agent(f'[provider]\nbase_url = "{server.base_url}"\n'
                                  f'model = "test-model"\n{SWITCHES_LED}')
        runtime = agent.runtime
        assert runtime.agent is not None and runtime.safe_mode.active
        reply = await runtime.agent.respond(msg("hello"))
        assert reply.startswith("The agent is in safe mode after 3 abnormal ends in 10 minutes")
        assert "/resume" in reply and "edge-cli resume" in reply and server.requests == []
        assert not any(t.name == "scheduler" for t in runtime.supervised_tasks())
        # a direct command still reaches the pins, through the policy
        assert "on" in (await runtime.agent.command(msg("/gpio led on")) or "")
        refused = await runtime.agent.command(msg("/resume", sender="7", channel="telegram"))
        assert refused is not None and refused.startswith("Only an admin")
        assert runtime.safe_mode.active
        resumed = await runtime.agent.command(msg("/resume"))  # the operator's terminal: an admin
        assert resumed is not None and resumed.startswith("Left safe mode")
        assert any(t.name == "scheduler" for t in runtime.supervised_tasks())
        assert await runtime.agent.respond(msg("hello")) == "hello again"
        assert len(server.requests) == 1


def test_under_systemd_the_reason_is_how_systemd_saw_the_agent_end(env: dict[str, str]) -> None:
    state = Path(env["EDGE_STATE_DIR"])
    ledger = RunLedger.in_state_dir(state)
    ended = dict(env, SERVICE_RESULT="watchdog", EXIT_CODE="killed", EXIT_STATUS="ABRT")
    for _ in range(3):
        ledger.begin(pid=1)  # then systemd's watchdog kills it and runs ExecStopPost=:
        out = cli("safe-state", env=ended, timeout=20)
        assert out.returncode == 0, out.stderr
    cause = ledger.begin(pid=1)
    assert cause is not None
    assert cause.reason == "service_result=watchdog, exit_code=killed, exit_status=ABRT"


def test_an_oom_kill_is_said_as_such_in_status_and_doctor(env: dict[str, str]) -> None:
    kill(start_agent(env), env)  # the kernel's OOM killer at the unit's MemoryMax=, then:
    oom = dict(env, SERVICE_RESULT="oom-kill", EXIT_CODE="killed", EXIT_STATUS="KILL")
    assert cli("safe-state", env=oom, timeout=20).returncode == 0
    offline = cli("status", env=env).stdout
    assert "last end: killed for memory (oom-kill) at " in offline
    checks = {c["name"]: c for c in json.loads(cli("doctor", "--json", env=env).stdout)["data"]["checks"]}
    assert checks["last end"]["status"] == "warn"
    assert checks["last end"]["detail"].startswith("killed for memory (oom-kill) at ")
    assert "MemoryMax=" in checks["last end"]["fix"]
    proc = start_agent(env)  # restarted by systemd: the status says how the last run ended
    try:
        status = json.loads(cli("status", "--json", env=env).stdout)["data"]
        assert status["last_end"]["reason"] == "killed for memory (oom-kill)"
        assert status["last_end"]["killed_for_memory"] is True
        assert "last end: killed for memory (oom-kill)" in cli("status", env=env).stdout
    finally:
        stop(proc)
    proc = start_agent(env)  # after a clean stop there is nothing to say
    try:
        assert "last end" not in cli("status", env=env).stdout
    finally:
        stop(proc)
    checks = {c["name"]: c for c in json.loads(cli("doctor", "--json", env=env).stdout)["data"]["checks"]}
    assert checks["last end"]["status"] == "ok"


def test_a_watchdog_kill_is_the_last_end_with_its_reason(tmp_path: Path) -> None:
    ledger = RunLedger.in_state_dir(tmp_path)
    assert ledger.last_end() is None
    ledger.begin(pid=1, now=100)
    ledger.note_end("service_result=watchdog, exit_code=killed, exit_status=ABRT")
    end = RunLedger.in_state_dir(tmp_path).last_end()  # no agent: the last run recorded
    assert end is not None and not end.killed_for_memory
    assert end.reason == "service_result=watchdog, exit_code=killed, exit_status=ABRT"
    again = RunLedger.in_state_dir(tmp_path)
    again.begin(pid=2, now=200)  # the next start: the run before it, found ended at 200
    assert again.last_end() == end.__class__(200, end.reason)
