"""`edge-cli safe-state` (the service's ExecStopPost=) on a real kernel GPIO chip: after the agent
was killed with SIGKILL, which runs none of its code, every header output goes to its safe level."""

from __future__ import annotations

import json
import signal

import pytest

from tests.kernel.agent import FAN, LED, RELAY, Agent, edge, prepare
from tests.kernel.guest import KernelGuest


@pytest.fixture(scope="module")
def guest(kernel_guest: KernelGuest) -> KernelGuest:
    return prepare(kernel_guest)


def test_after_a_sigkill_safe_state_drives_every_output_to_its_safe_level(guest):
    # each line's pull is the opposite of its safe level: gpio-sim returns a released line to
    # its pull, so a safe level seen between two releases came from safe-state
    guest.set_pull(LED, "pull-up")
    guest.set_pull(RELAY, "pull-down")  # active-low: safe off is a high line
    guest.set_pull(FAN, "pull-up")
    agent = Agent(guest, "agent-killed")
    try:
        for pin in ("led", "relay"):
            assert edge(guest, "gpio", "write", pin, "on")["rc"] == 0
        assert edge(guest, "gpio", "pwm", "fan", "1")["rc"] == 0
        killed = agent.stop(signal.SIGKILL)
        assert "safe_state" not in killed["stderr"]  # the agent ran no code of its own
        watch = guest.watch_lines([LED, RELAY, FAN])
        out = edge(guest, "safe-state", "--json")
        edges = watch.stop()
    finally:
        for line in (LED, RELAY, FAN):
            guest.set_pull(line, "pull-down")
    assert out["rc"] == 0, out
    outputs = json.loads(out["stdout"])["data"]["outputs"]
    assert [(o["pin"], o["line"], o["ok"], o["simulated"]) for o in outputs] == [
        (f"GPIO{LED}", "low", True, False), (f"GPIO{RELAY}", "high", True, False),
        (f"GPIO{FAN}", "low", True, False)]
    seen = {line: [v for _, ln, v in edges if ln == line] for line in (LED, RELAY, FAN)}
    assert seen[LED][:3] == [1, 0, 1]  # released to its pull-up, safe off, released again
    assert seen[RELAY][:3] == [0, 1, 0]  # released low (on), safe off (high), released
    # the fan is driven last and released a moment later, when the command exits: the polling
    # watcher, sharing the guest's one CPU with it, can miss so brief a state under load, so for
    # it the command's own read-back (the JSON above) is the evidence
    assert seen[FAN][0] == 1 and seen[FAN][-1] == 1
