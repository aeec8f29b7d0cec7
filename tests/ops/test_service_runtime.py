"""The agent as systemd runs it: a real `edge-cli run` process with NOTIFY_SOCKET, WATCHDOG_USEC and
RUNTIME_DIRECTORY set, queried over its control socket, stopped with SIGTERM."""

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time

import pytest

from edge.channels.base import Channel
from edge.cli.logs_cmd import follow_file, journal_command, tail
from edge.status import format_status, memory_store_summary


def recv_until(sock, wanted: str, timeout: float = 30.0) -> list[str]:
    seen, deadline = [], time.monotonic() + timeout
    while time.monotonic() < deadline:
        sock.settimeout(max(0.1, deadline - time.monotonic()))
        try:
            seen.append(sock.recv(4096).decode())
        except TimeoutError:
            break
        if wanted in seen[-1]:
            return seen
    raise AssertionError(f"{wanted!r} not received; got {seen}")


@pytest.fixture
def agent(tmp_path):
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(str(tmp_path / "notify"))
    runtime_dir, state = tmp_path / "run", tmp_path / "state"
    runtime_dir.mkdir()
    env = {**os.environ, "NOTIFY_SOCKET": str(tmp_path / "notify"), "WATCHDOG_USEC": "1000000",
           "RUNTIME_DIRECTORY": str(runtime_dir), "EDGE_STATE_DIR": str(state),
           "EDGE_CONFIG": "", "EDGE_LOGGING__FORMAT": "json",
           "EDGE_PROVIDER__API_KEY": "sk-should-never-appear-0000"}
    for key in ("JOURNAL_STREAM", "INVOCATION_ID"):
        env.pop(key, None)
    proc = subprocess.Popen([sys.executable, "-m", "edge.cli.main", "run"], env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        yield proc, notify, env, tmp_path
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=30)
        notify.close()


def cli(env, *args):
    return subprocess.run([sys.executable, "-m", "edge.cli.main", *args], env=env,
                          capture_output=True, text=True, timeout=60)


def test_ready_watchdog_status_and_stopping(agent):
    proc, notify, env, tmp_path = agent
    ready = recv_until(notify, "READY=1")
    assert "STATUS=ready: 1/1 boards connected, channels none" in ready[-1]
    pings = recv_until(notify, "WATCHDOG=1", timeout=5)
    assert pings[-1] == "WATCHDOG=1"
    assert (tmp_path / "run" / "control.sock").is_socket()

    # a refused actuation is a warning: it shows up in the status op's recent errors
    refused = cli(env, "gpio", "write", "GPIO5", "on")
    assert refused.returncode == 1
    status = json.loads(cli(env, "status", "--json").stdout)
    assert status["via"] == "daemon"
    errors = status["data"]["recent_errors"]
    assert errors and errors[-1]["level"] == "warning" and "GPIO5" in errors[-1]["message"]
    memory = status["data"]["memory"]  # the agent opened its (empty) store at start
    assert memory["backend"] == "sqlite" and memory["entries"] == 0
    text = cli(env, "status").stdout
    assert "last errors (1 recent" in text and "memory: sqlite, 0 entries" in text

    proc.send_signal(signal.SIGTERM)
    stopping = recv_until(notify, "STOPPING=1")
    assert stopping[-1] == "STOPPING=1\nSTATUS=stopping: SIGTERM"
    assert proc.wait(timeout=30) == 0

    log_file = tmp_path / "state" / "edge-agent.log"
    lines = log_file.read_text().splitlines()
    events = [json.loads(line) for line in lines]
    assert {"ready", "policy_refused", "stopped"} <= {e.get("event") for e in events}
    assert "sk-should-never-appear" not in log_file.read_text()

    shown = cli(env, "logs", "--source", "file", "-n", "2", "--json")
    assert shown.returncode == 0
    assert [e["event"] for e in json.loads(shown.stdout)["data"]["events"]][-1] == "stopped"


def test_memory_store_is_shown_only_when_it_exists(tmp_path):
    assert memory_store_summary(tmp_path) is None
    (tmp_path / "memory").mkdir()
    (tmp_path / "memory" / "sessions.db").write_bytes(b"")  # not a memory store
    with sqlite3.connect(tmp_path / "memory" / "other.db") as db:
        db.execute("CREATE TABLE sessions (id TEXT)")
    assert memory_store_summary(tmp_path) is None
    with sqlite3.connect(tmp_path / "memory" / "brain.db") as db:
        db.execute("CREATE TABLE memories (id TEXT, key TEXT, content TEXT)")
        db.executemany("INSERT INTO memories VALUES (?, ?, ?)", [(str(i), f"k{i}", "x") for i in range(3)])
    summary = memory_store_summary(tmp_path)
    assert summary["backend"] == "sqlite" and summary["entries"] == 3
    assert summary["path"].endswith("brain.db")
    line = format_status({"daemon": {}, "memory": summary})
    assert "memory: sqlite, 3 entries" in line


def test_log_file_follow_survives_rotation(tmp_path):
    path = tmp_path / "edge-agent.log"
    path.write_text("one\ntwo\nthree\n")
    lines, offset = tail(path, 2)
    assert lines == ["two\n", "three\n"]
    with path.open("a") as fh:
        fh.write("four\n")
    followed = follow_file(path, offset, stop_after=3)
    assert next(followed) == "four\n"
    path.rename(tmp_path / "edge-agent.log.1")  # what RotatingFileHandler does
    path.write_text("five\n")
    assert next(followed) == "five\n"


def test_journal_command():
    assert journal_command(True, 20, False) == ["journalctl", "-u", "edge-agent", "-n", "20",
                                                "--no-pager", "-f"]
    assert "-o" in journal_command(False, 5, True)


def test_service_status_marks_a_channel_that_goes_down(default_config, mock_factory):
    from edge.channels.supervisor import ListenerSupervisor
    from edge.runtime import Runtime

    runtime = Runtime(default_config, resident=True, pin_factory=mock_factory)
    sent = []
    runtime.service.status = sent.append

    class Flaky(Channel):
        name = "telegram"

        async def listen(self, bus):
            pass

        async def send(self, message):
            pass

        async def health_check(self):
            return True

    supervisor = ListenerSupervisor(Flaky(), on_change=runtime._refresh_service_status)
    runtime.supervisors["telegram"] = supervisor
    # a new supervisor is not down: the READY line lists channels as they are from the start
    assert runtime._service_status() == "ready: 0/1 boards connected, channels telegram"
    supervisor._set_down(None)   # listening: no change, no new status
    supervisor._set_down(123.0)  # failed
    supervisor._set_down(123.5)  # still down: no new status
    supervisor._set_down(None)   # restarted
    assert sent == ["ready: 0/1 boards connected, channels telegram(down)",
                    "ready: 0/1 boards connected, channels telegram"]
