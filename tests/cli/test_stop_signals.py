"""Every signal that would end the process first returns the pins to their safe levels: the
agent (`edge-cli run`) and a one-shot `--hold`, run as real processes. SIGUSR1, SIGUSR2 and
SIGALRM used to kill them with an output still on (exit -10, -12, -14)."""

from __future__ import annotations

import json
import re
import signal
import subprocess
from pathlib import Path

import pytest

from edge.core.stopsignals import ASKED_TO_STOP, IGNORED, NOT_CAUGHT, STOPPING, UNEXPECTED, signal_name
from tests.helpers import EDGE_CLI, ROOT, cli, start_agent, wait_for

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


def holding(env: dict[str, str], *, as_json: bool = False) -> subprocess.Popen[str]:
    """``edge-cli gpio write led on --hold 30``, returned once the level is set and held (said
    on stderr; with ``--json``, which says nothing until the end, once the pin reads on)."""
    proc = subprocess.Popen([*EDGE_CLI, "gpio", "write", "led", "on", "--hold", "30",
                             *(["--json"] if as_json else [])], env=env, cwd=ROOT, text=True,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    if as_json:
        wait_for(lambda: proc.poll() is not None or _led_is_on(env))
        assert proc.poll() is None, proc.communicate()
        return proc
    line = proc.stderr.readline()
    assert "holding for 30 s" in line, line + proc.stderr.read()
    return proc


def _led_is_on(env: dict[str, str]) -> bool:
    """Through the agent, the led reads on; without one, the direct write was logged."""
    if (Path(env["EDGE_STATE_DIR"]) / "control.sock").exists():
        return json.loads(cli("gpio", "read", "led", "--json", env=env).stdout)["data"]["value"] == 1.0
    log = Path(env["EDGE_STATE_DIR"]) / "edge-agent.log"
    return log.exists() and "event=actuation board=gpio pin=GPIO17 value=on" in log.read_text()


CUT_SHORT = re.compile(r"edge-cli: gpio:GPIO17 \(led\) set on, but (?P<signal>\w+) cut the 30 s hold short "
                       r"after [^;]+; it is back at its safe level \(off\) and reads off")
"""A hold a signal ended early is no success: the command says so, as an error (stderr, exit 130)."""


@pytest.mark.parametrize("signum", [signal.SIGUSR1, signal.SIGALRM, signal.SIGQUIT],
                         ids=signal_name)
def test_a_signal_ends_a_direct_hold_and_the_pin_goes_safe(isolated_env, signum):
    proc = holding(isolated_env)
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 130, err  # a hold ended early by a signal
    assert out == ""
    said = CUT_SHORT.fullmatch(err.splitlines()[-1])
    assert said and said["signal"] == signal_name(signum), err
    log = (Path(isolated_env["EDGE_STATE_DIR"]) / "edge-agent.log").read_text()
    assert "event=safe_state board=gpio pin=GPIO17 value=off" in log


def test_a_cut_short_hold_is_one_failed_json_object(isolated_env):
    proc = holding(isolated_env, as_json=True)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 130, err
    body = json.loads(out)  # the whole of stdout: one object
    assert (body["ok"], body["exit_code"], body["via"]) == (False, 130, "direct"), body
    assert CUT_SHORT.fullmatch(f"edge-cli: {body['error']}")["signal"] == "SIGTERM", body
    assert body["data"]["held"] is False and body["data"]["signal"] == "SIGTERM"
    assert (body["data"]["restored"], body["data"]["value_after"]) == (True, 0.0)
    log = (Path(isolated_env["EDGE_STATE_DIR"]) / "edge-agent.log").read_text()
    assert "event=safe_state board=gpio pin=GPIO17 value=off" in log


def test_a_signal_ends_a_hold_through_the_agent_and_the_pin_goes_safe(isolated_env):
    agent = start_agent(isolated_env)
    try:
        proc = holding(isolated_env, as_json=True)
        on = json.loads(cli("gpio", "read", "led", "--json", env=isolated_env).stdout)
        assert on["via"] == "daemon" and on["data"]["value"] == 1.0
        proc.send_signal(signal.SIGUSR2)
        out, err = proc.communicate(timeout=20)
        assert proc.returncode == 130, err
        body = json.loads(out)
        assert (body["ok"], body["exit_code"], body["via"]) == (False, 130, "daemon"), body
        assert CUT_SHORT.fullmatch(f"edge-cli: {body['error']}")["signal"] == "SIGUSR2", body
        off = json.loads(cli("gpio", "read", "led", "--json", env=isolated_env).stdout)
        assert off["data"]["value"] == 0.0
        assert agent.poll() is None
    finally:
        agent.terminate()
        agent.communicate(timeout=20)


def test_ctrl_c_says_on_screen_that_the_outputs_went_safe(isolated_env):
    """Ctrl-C ended a terminal's agent with no word: its last line now says it stopped and what
    the safe state did to each output, from the door's own outcome."""
    agent = start_agent(isolated_env)
    try:
        assert cli("gpio", "write", "led", "on", env=isolated_env).returncode == 0
        agent.send_signal(signal.SIGINT)
        _, err = agent.communicate(timeout=20)
    finally:
        agent.kill()
    assert agent.returncode == 0, err[-2000:]
    assert err.splitlines()[-1] == "edge-agent: stopped; outputs are at their safe levels (led off)"
    assert err.index("safe_state board=gpio pin=GPIO17 value=off") < err.index("edge-agent: stopped")


async def test_catch_hands_each_signal_to_the_loop_even_one_a_worker_thread_receives():
    """:func:`~edge.core.stopsignals.catch`: the asked-to-stop signals through asyncio, the others
    through a plain handler; each reaches the callback on the loop, also when the kernel gives it
    to a worker thread (here on purpose, with ``pthread_kill``), and the handlers are put back."""
    import asyncio
    import threading

    from edge.core.stopsignals import catch

    chosen = (signal.SIGTERM, signal.SIGUSR1, signal.SIGRTMIN + 3)
    before = {signum: signal.getsignal(signum) for signum in chosen}
    caught: asyncio.Queue[int] = asyncio.Queue()
    restore = catch(asyncio.get_running_loop(), chosen, caught.put_nowait)
    try:
        assert signal.getsignal(signal.SIGUSR1) is not before[signal.SIGUSR1]
        for signum in (signal.SIGUSR1, signal.SIGTERM, signal.SIGRTMIN + 3):
            def to_this_thread(signum: int = signum) -> None:
                signal.pthread_kill(threading.get_ident(), signum)

            await asyncio.to_thread(to_this_thread)
            assert await asyncio.wait_for(caught.get(), 10) == signum
    finally:
        restore()
    assert {signum: signal.getsignal(signum) for signum in chosen} == before
    assert caught.empty()
