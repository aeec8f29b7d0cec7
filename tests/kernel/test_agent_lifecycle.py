"""The agent's life on a real kernel GPIO character device: stopping by signal, one-shot
commands with no agent running, and the errors a missing pin factory or a forbidden chip give.
Each test starts (and stops) what it needs: two owners of a line cannot coexist."""

from __future__ import annotations

import json
import signal

import pytest

from tests.kernel.agent import EDGE_CLI, ENV, FAN, LED, RELAY, STATE, Agent, edge, prepare, until
from tests.kernel.guest import KernelGuest


@pytest.fixture(scope="module")
def guest(kernel_guest: KernelGuest) -> KernelGuest:
    return prepare(kernel_guest)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_puts_every_output_at_its_safe_level_before_the_lines_are_released(guest, signum):
    # a pulled-up LED line and a pulled-down relay line: once released, gpio-sim returns each to
    # its pull, the opposite of its safe level, so the safe level seen in between came from us
    guest.set_pull(LED, "pull-up")
    guest.set_pull(RELAY, "pull-down")
    agent = Agent(guest, f"agent-{signum}")
    try:
        for pin in ("led", "relay"):
            assert edge(guest, "gpio", "write", pin, "on")["rc"] == 0
        assert edge(guest, "gpio", "pwm", "fan", "1")["rc"] == 0
        assert (guest.line_value(LED), guest.line_value(RELAY), guest.line_value(FAN)) == (1, 0, 1)
        watch = guest.watch_lines([LED, RELAY, FAN])
        result = agent.stop(signum)
        edges = watch.stop()
    finally:
        guest.set_pull(LED, "pull-down")
        guest.set_pull(RELAY, "pull-down")
    assert result["rc"] == 0, result
    seen = {line: [v for _, ln, v in edges if ln == line] for line in (LED, RELAY, FAN)}
    assert seen[LED][:3] == [1, 0, 1]  # on, safe off, released to its pull-up
    assert seen[RELAY][:3] == [0, 1, 0]  # on (low), safe off (high), released to its pull-down
    assert seen[FAN][:2] == [1, 0]
    assert "safe_state board=gpio pin=GPIO22 value=off line=high" in result["stderr"]


def test_one_shot_write_without_an_agent_needs_hold_and_ends_safe(guest):
    guest.run(["rm", "-rf", STATE])
    refused = edge(guest, "gpio", "write", "led", "on")
    assert refused["rc"] == 1 and "--hold SECONDS" in refused["stderr"], refused
    assert "Traceback" not in refused["stderr"]
    guest.set_pull(LED, "pull-up")  # released: high; safe: low
    try:
        watch = guest.watch_lines([LED])
        held = edge(guest, "gpio", "write", "led", "on", "--hold", "1", "--json")
        edges = [v for _, line, v in watch.stop() if line == LED]
    finally:
        guest.set_pull(LED, "pull-down")
    assert held["rc"] == 0, held
    data = json.loads(held["stdout"])["data"]
    assert data["held"] is True and data["restored"] is True
    # on for the hold, back to its safe level (low), then released to its pull-up
    assert edges[-3:] == [1, 0, 1], edges


def test_a_signal_ends_a_hold_early_and_the_pin_still_goes_safe(guest):
    guest.run(["rm", "-rf", STATE])
    guest.set_pull(RELAY, "pull-up")  # released and safe are both high: on is the only low
    try:
        guest.spawn("hold", [EDGE_CLI, "gpio", "write", "relay", "on", "--hold", "600"], env=ENV)
        until(lambda: guest.line_value(RELAY) == 0, timeout=60)  # the active-low relay is on
        watch = guest.watch_lines([RELAY])
        guest.signal("hold", signal.SIGTERM)
        result = guest.wait("hold", timeout=60)
        edges = [v for _, line, v in watch.stop() if line == RELAY]
    finally:
        guest.set_pull(RELAY, "pull-down")
    assert result["rc"] == 130, result
    assert edges == [0, 1]  # back to safe off (a high line), and released high


def test_a_missing_pin_factory_is_a_clear_error_not_a_traceback(guest):
    guest.run(["mkdir", "-p", "/tmp/nolgpio"])
    guest.write("/tmp/nolgpio/lgpio.py",
                "raise ImportError(\"No module named 'lgpio'\", name='lgpio')\n")
    env = {"PYTHONPATH": "/tmp/nolgpio"}
    guest.run(["rm", "-rf", STATE])
    status = edge(guest, "status", "--json", env=env)
    assert status["rc"] == 3 and "Traceback" not in status["stderr"], status  # 3: no agent running
    (board,) = json.loads(status["stdout"])["data"]["boards"]
    assert board["connected"] is False and board["simulated"] is False
    assert "lgpio is not installed" in board["detail"]
    assert "pip install 'lgpio>=0.2.2'" in board["detail"]
    piped = guest.run(["sh", "-c", f"printf '/pins\\n/gpio led on\\n' | {EDGE_CLI} run"],
                      env={**ENV, **env}, timeout=120)
    assert piped["rc"] == 0 and "Traceback" not in piped["stderr"], piped
    assert "board gpio is down" in piped["stdout"] and "lgpio is not installed" in piped["stdout"]
    doctor = edge(guest, "doctor", env=env)
    assert "[FAIL] pin factory" in doctor["stdout"] and "pip install" in doctor["stdout"]


def test_a_chip_the_agent_may_not_open_says_how_to_fix_it(guest):
    nobody = 65534
    home = "/tmp/edge-nobody"
    guest.run(["sh", "-c", f"rm -rf {home}; mkdir -p {home}; chmod 0777 {home}"])
    guest.chmod("/root", 0o755)  # the venv's interpreter may live under /root (pyenv)
    guest.chmod("/dev/gpiochip0", 0o600)
    try:
        out = guest.run([EDGE_CLI, "status", "--json"],
                        env={**ENV, "HOME": home, "EDGE_PATHS__STATE_DIR": f"{home}/state"},
                        user=nobody, timeout=120)
    finally:
        guest.chmod("/dev/gpiochip0", 0o660)
    assert out["rc"] == 3 and "Traceback" not in out["stderr"], out
    (board,) = json.loads(out["stdout"])["data"]["boards"]
    assert board["connected"] is False
    assert "cannot open /dev/gpiochip0: permission denied" in board["detail"]
    assert "gpio group" in board["detail"]
