"""``edge-cli`` facing a daemon that accepts but never answers: a clear message and exit 1, never a
TimeoutError traceback, and never a fall-back to the boards the stuck agent owns."""

from __future__ import annotations

import socket

import pytest

from edge.cli.main import main
from edge.control import client
from edge.control.client import DaemonNotAnswering


@pytest.fixture
def stuck_daemon(isolated_env, tmp_path):
    """A socket at the agent's path that accepts connections (the backlog) and never replies."""
    path = tmp_path / "state" / "control.sock"
    path.parent.mkdir(parents=True, exist_ok=True)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(8)
    yield path
    server.close()


def test_a_stuck_daemon_raises_a_clear_error_naming_the_socket(stuck_daemon):
    with pytest.raises(DaemonNotAnswering) as caught:
        client.request([stuck_daemon], "gpio.read", {"pin": "led"}, timeout=0.2)
    message = str(caught.value)
    assert str(stuck_daemon) in message and "did not answer gpio.read within 0.2 s" in message
    assert "restart" in message and "edge-cli logs" in message


def test_status_waits_less_than_other_operations():
    assert client.OP_TIMEOUTS["status"] < client.TIMEOUT_SECONDS


@pytest.mark.parametrize("argv", [["status"], ["gpio", "write", "led", "on"], ["models"]])
def test_edge_cli_exits_1_with_a_message_not_a_traceback(stuck_daemon, monkeypatch, capsys, argv):
    monkeypatch.setattr(client, "TIMEOUT_SECONDS", 0.2)
    monkeypatch.setitem(client.OP_TIMEOUTS, "status", 0.2)
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith("edge-cli: the agent at") and str(stuck_daemon) in err
    assert "Traceback" not in err and "restart it" in err
