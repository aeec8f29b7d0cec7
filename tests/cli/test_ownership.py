"""One owner of the hardware: a running agent's lock keeps one-shot commands and a second agent
off the boards, and a socket the user may not use is an error, never a reason to act directly."""

from __future__ import annotations

import json
import socket

import pytest

from edge.cli.main import main
from edge.core.ownership import AgentLock, AgentRunning, holder
from tests.helpers import cli


def state(env) -> str:
    return env["EDGE_STATE_DIR"]


def test_a_held_lock_keeps_one_shot_commands_off_the_boards(isolated_env, tmp_path):
    lock = AgentLock.acquire(tmp_path / "state" / "agent.lock")  # an agent whose socket is gone
    try:
        out = cli("gpio", "write", "led", "on", "--hold", "0.1", "--json", env=isolated_env)
        data = json.loads(out.stdout)
        assert out.returncode == 1 and "an agent is running" in data["error"], out.stdout
        assert "acted on the board" not in out.stderr and "safe_state" not in out.stderr
    finally:
        lock.release()
    assert holder(tmp_path / "state" / "agent.lock") is None


def test_a_second_run_is_refused_before_it_touches_a_board(isolated_env, tmp_path):
    lock = AgentLock.acquire(tmp_path / "state" / "agent.lock")
    try:
        out = cli("run", env=isolated_env, stdin="/gpio led on\n")
    finally:
        lock.release()
    assert out.returncode == 1 and "already running" in out.stderr
    assert "board_connected" not in out.stderr and "safe_state" not in out.stderr


def test_the_lock_names_the_holder_and_dies_with_it(tmp_path):
    path = tmp_path / "agent.lock"
    lock = AgentLock.acquire(path)
    with pytest.raises(AgentRunning, match=r"pid \d+"):
        AgentLock.acquire(path)
    assert path.stat().st_mode & 0o777 == 0o644
    lock.release()
    AgentLock.acquire(path).release()  # a lock file left behind never blocks a start


def test_permission_denied_on_the_socket_is_an_error_not_direct_mode(isolated_env, tmp_path,
                                                                     monkeypatch, capsys):
    sock_path = tmp_path / "state" / "control.sock"
    sock_path.parent.mkdir(parents=True)
    sock_path.touch()

    def forbidden(self, address):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(socket.socket, "connect", forbidden)
    code = main(["gpio", "write", "led", "on", "--hold", "0.1", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 1 and data["ok"] is False
    assert "permission denied" in data["error"] and "usermod -aG edge" in data["error"]
    assert "held" not in data["data"]  # nothing was driven
