"""Every signal that would end the process first returns the pins to their safe levels: the
agent (`edge-cli run`) and a one-shot `--hold`, run as real processes. SIGUSR1, SIGUSR2 and
SIGALRM used to kill them with an output still on (exit -10, -12, -14)."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

import pytest

from edge.core.stopsignals import ASKED_TO_STOP, IGNORED, NOT_CAUGHT, STOPPING, UNEXPECTED, signal_name
from tests.helpers import EDGE_CLI, ROOT, cli, start_agent

DOES_NOT_END = {signal.SIGCHLD, signal.SIGCONT, signal.SIGTSTP, signal.SIGTTIN, signal.SIGTTOU,
                signal.SIGURG, signal.SIGWINCH}
"""Signals whose default action ignores, stops or continues the process, but never ends it."""


def test_every_signal_that_would_end_the_process_is_handled_ignored_or_named():
    groups = [set(ASKED_TO_STOP), set(UNEXPECTED), set(IGNORED), set(NOT_CAUGHT), DOES_NOT_END]
    for signum in signal.valid_signals():
        assert sum(signum in group for group in groups) == 1, signal_name(signum)
    assert STOPPING == ASKED_TO_STOP + UNEXPECTED
    for signum in IGNORED:  # by Python itself, from start-up
        assert signal.getsignal(signum) is signal.Handlers.SIG_IGN


@pytest.mark.parametrize("signum", [signal.SIGUSR1, signal.SIGUSR2, signal.SIGALRM,
                                    signal.SIGPWR, signal.SIGRTMIN + 3], ids=signal_name)
def test_an_unexpected_signal_stops_the_agent_through_the_safe_state(isolated_env, signum):
    agent = start_agent(isolated_env)
    try:
        assert cli("gpio", "write", "led", "on", env=isolated_env).returncode == 0
        agent.send_signal(signum)
        _, err = agent.communicate(timeout=20)
    finally:
        agent.kill()
    assert agent.returncode == 128 + signum, err[-2000:]  # not -signum: it stopped, not died
    assert f"unexpected_signal signal={signal_name(signum)} action=stop" in err
    assert "safe_state board=gpio pin=GPIO17 value=off" in err
    assert err.index("unexpected_signal") < err.index("safe_state") < err.index("stopped")


def holding(env: dict[str, str]) -> subprocess.Popen[str]:
    """``edge-cli gpio write led on --hold 30``, returned once the level is set and held."""
    proc = subprocess.Popen([*EDGE_CLI, "gpio", "write", "led", "on", "--hold", "30"], env=env,
                            cwd=ROOT, text=True, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stderr is not None
    line = proc.stderr.readline()
    assert "holding for 30 s" in line, line + proc.stderr.read()
    return proc


@pytest.mark.parametrize("signum", [signal.SIGUSR1, signal.SIGALRM, signal.SIGQUIT],
                         ids=signal_name)
def test_a_signal_ends_a_direct_hold_and_the_pin_goes_safe(isolated_env, signum):
    proc = holding(isolated_env)
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 130, err  # a hold ended early by a signal
    assert "interrupted, then back to off" in out
    log = (Path(isolated_env["EDGE_STATE_DIR"]) / "edge-agent.log").read_text()
    assert "event=safe_state board=gpio pin=GPIO17 value=off" in log


def test_a_signal_ends_a_hold_through_the_agent_and_the_pin_goes_safe(isolated_env):
    agent = start_agent(isolated_env)
    try:
        proc = holding(isolated_env)
        on = json.loads(cli("gpio", "read", "led", "--json", env=isolated_env).stdout)
        assert on["via"] == "daemon" and on["data"]["value"] == 1.0
        proc.send_signal(signal.SIGUSR2)
        out, err = proc.communicate(timeout=20)
        assert proc.returncode == 130, err
        off = json.loads(cli("gpio", "read", "led", "--json", env=isolated_env).stdout)
        assert off["data"]["value"] == 0.0
        assert agent.poll() is None
    finally:
        agent.terminate()
        agent.communicate(timeout=20)
