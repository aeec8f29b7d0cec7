"""A real daemon process: one-shot commands go through its control socket; SIGTERM leaves pins safe."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import stat
import subprocess
import time

import pytest

from edge.runtime import Runtime
from tests.helpers import EDGE_CLI, ROOT, asker, cli


@pytest.fixture
def daemon(isolated_env, tmp_path):
    socket_path = tmp_path / "state" / "control.sock"
    proc = subprocess.Popen([*EDGE_CLI, "run"], env=isolated_env, cwd=ROOT, text=True,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 20
    while not socket_path.exists():
        assert proc.poll() is None, proc.stderr.read()
        assert time.monotonic() < deadline, "daemon did not start"
        time.sleep(0.05)
    yield proc, socket_path
    if proc.poll() is None:
        proc.kill()
        proc.wait()


def test_commands_go_through_the_daemon(daemon, isolated_env):
    proc, socket_path = daemon
    assert stat.S_IMODE(socket_path.stat().st_mode) == 0o660
    assert cli("gpio", "write", "led", "on", env=isolated_env).returncode == 0
    read = cli("gpio", "read", "led", "--json", env=isolated_env)
    data = json.loads(read.stdout)
    assert read.returncode == 0 and data["via"] == "daemon" and data["data"]["value"] == 1.0
    refused = cli("gpio", "write", "GPIO22", "on", "--json", env=isolated_env)
    assert refused.returncode == 1 and "not in the allowlist" in json.loads(refused.stdout)["error"]
    status = json.loads(cli("status", "--json", env=isolated_env).stdout)["data"]
    assert status["daemon"]["running"] and status["daemon"]["pid"] == proc.pid
    assert status["daemon"]["asyncio_tasks"] >= 1  # the loop's tasks, counted for the soak
    assert status["boards"][0]["simulated"] is True


def test_hold_through_the_daemon_returns_the_pin_to_its_safe_level(daemon, isolated_env):
    out = cli("gpio", "write", "led", "on", "--hold", "0.3", "--json", env=isolated_env)
    data = json.loads(out.stdout)
    assert out.returncode == 0 and data["via"] == "daemon", out.stderr
    assert data["data"]["held"] is True and data["data"]["value_after"] == 0.0
    read = json.loads(cli("gpio", "read", "led", "--json", env=isolated_env).stdout)
    assert read["data"]["value"] == 0.0


def test_second_daemon_refuses_to_start(daemon, isolated_env):
    out = cli("run", env=isolated_env, stdin="")
    assert out.returncode == 1 and "already running" in out.stderr


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT])
def test_a_stop_signal_restores_safe_levels_and_exits_cleanly(daemon, isolated_env, signum):
    proc, socket_path = daemon
    assert cli("gpio", "write", "led", "on", env=isolated_env).returncode == 0
    proc.send_signal(signum)  # SIGHUP: the SSH session of a foreground run dropped
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 0
    assert "safe_state board=gpio pin=GPIO17 value=off" in err
    assert not socket_path.exists()


async def test_sigterm_in_process_leaves_the_mock_pin_safe(default_config, mock_factory):
    with open(os.devnull) as devnull:
        runtime = Runtime(default_config, resident=True, pin_factory=mock_factory, stdin=devnull)
        task = asyncio.create_task(runtime.run())
        while not default_config.control_socket.exists():
            await asyncio.sleep(0.01)
        result = await runtime.tools["gpio_write"].execute({"pin": "led", "value": "on"}, asker("test"))
        assert result.success and mock_factory.pin(17).state == 1
        os.kill(os.getpid(), signal.SIGTERM)
        await asyncio.wait_for(task, 10)
    assert mock_factory.pin(17).state == 0
