"""One meaning of an input's "on" on a real kernel GPIO chip (issue 35, part 2): the float switch
of the issue's table, moved by gpio-sim's pull in the guest.

``tank2`` is a pulled-up input (the default ``pull = "up"``: lgpio asks the kernel for the
line's pull-up bias, which gpio-sim applies); a float switch to ground closes when the tank runs
low, which here is gpio-sim's ``pull-down`` on the line. ``forbid = "mister on"`` while
``tank2 on``. The agent runs in the guest (``simulate = false``, lgpio on ``/dev/gpiochip0``,
this checkout), and the walk is full -> low -> full. At every step:

- the real ``edge-cli gpio read tank2`` in the guest says ``is off (switch open: line high,
  pulled up)`` or ``is on (switch closed: line low, pulled up)``, and its ``--json`` (the
  ``gpio_read`` tool's result, through the agent's socket) gives the same ``shown``, ``value``
  and ``line``;
- ``edge-cli gpio write mister on`` is done (exit 0) while the tank is full and refused while it
  is low (exit 1, in the interlock's words); the mister, on as the tank runs low, is tripped off;
- the mister's line is what the table says: the kernel's ``gpio_value`` trace events (tracefs)
  record every value set on it, and there are exactly three: high (allowed, the tank full), low
  (the trip as it ran low), high (allowed again once it was full). The refusal set nothing.

The MQTT state is not looked at here (the guest has no network, and a broker and client in it
would cost seconds of its one CPU): tests/test_input_meaning.py and
tests/e2e/test_input_meaning_uno.py check it beside the same reads.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest

from tests.kernel.agent import TracedAgent, gpio_board, traced_agent
from tests.kernel.guest import PYTHON, Completed, KernelGuest

TANK, MISTER = 16, 26  # BCM offsets no other kernel test uses
HOME = "/tmp/edge-tank"
CONFIG = f"{HOME}/config.toml"
STATE = f"{HOME}/state"
ENV = {"EDGE_CONFIG": CONFIG, "EDGE_MEMORY__EMBEDDER": "none", "HOME": HOME}
EDGE_CLI = f"{PYTHON.parent}/edge-cli"

AGENT_CONFIG = gpio_board(STATE) + f"""
[boards.gpio.aliases]
tank2 = "GPIO{TANK}"
mister = "GPIO{MISTER}"

[boards.gpio.pins]
tank2 = {{ mode = "input" }}
mister = {{ mode = "output", safe = "off" }}

[security]
autonomy = "full"

[[interlocks]]
name = "dry-run"
forbid = "mister on"
while = "tank2 on"
"""

FULL = "gpio:GPIO16 (tank2) is off (switch open: line high, pulled up)"
LOW = "gpio:GPIO16 (tank2) is on (switch closed: line low, pulled up)"
HOLDING = "tank2 is on"
"""Why the interlock holds: its first words (what follows may name the wiring too)."""
REFUSED = f"mister: refused by interlock dry-run ({HOLDING}"


def edge(guest: KernelGuest, *args: str) -> Completed:
    """``edge-cli ARGS`` in the guest, beside the agent (it answers through the socket)."""
    return guest.run([EDGE_CLI, *args], env=ENV, timeout=120)


@pytest.fixture(scope="module")
def agent(kernel_guest: KernelGuest) -> Iterator[TracedAgent]:
    """The agent with the float switch and the mister, ready (its interlock watch running),
    from this checkout; the tank full (the line's pull-up); tracefs mounted."""
    kernel_guest.set_pull(TANK, "pull-up")
    try:
        with traced_agent(kernel_guest, "agent-input-meaning", HOME, AGENT_CONFIG, ENV) as running:
            yield running
    finally:
        kernel_guest.set_pull(TANK, "pull-up")


def read_text(guest: KernelGuest) -> str:
    """What ``edge-cli gpio read tank2`` says."""
    text = edge(guest, "gpio", "read", "tank2")
    assert text["rc"] == 0, text
    return text["stdout"].strip()


def read_json(guest: KernelGuest) -> tuple[float, str, str]:
    """``edge-cli gpio read tank2 --json``'s value, line and shown: the tool's result, as the
    agent read it."""
    as_json = edge(guest, "gpio", "read", "tank2", "--json")
    assert as_json["rc"] == 0, as_json
    answer = json.loads(as_json["stdout"])
    assert answer["via"] == "daemon", answer
    return answer["data"]["value"], answer["data"]["line"], answer["data"]["shown"]


def test_the_float_switch_table_on_the_kernel_chip(agent: TracedAgent) -> None:
    """Full -> low -> full, moved by gpio-sim's pull: edge-cli's read (text and the tool's
    JSON) says off/on with the line beside it; the mister is set on when the tank is full,
    tripped off as it runs low and refused in the interlock's words while it is low; the kernel
    saw exactly these sets on the mister's line: high, low (the trip), high."""
    guest = agent.guest
    with agent.traced() as trace:
        # full: the switch is open, the line high (the pull-up lgpio asked for); the mister
        # may be set on
        assert guest.line_value(TANK) == 1
        assert read_text(guest) == FULL
        assert read_json(guest) == (0.0, "high", "off (switch open: line high, pulled up)")
        done = edge(guest, "gpio", "write", "mister", "on")
        assert done["rc"] == 0, done
        assert guest.line_value(MISTER) == 1

        # low: the switch closes the line to ground; the trip drives the mister off, and
        # switching it on again is refused
        guest.set_pull(TANK, "pull-down")
        deadline = time.monotonic() + 10
        while guest.line_value(MISTER) != 0:
            assert time.monotonic() < deadline, "the mister was not tripped off"
            time.sleep(0.05)
        assert read_text(guest) == LOW
        assert read_json(guest) == (1.0, "low", "on (switch closed: line low, pulled up)")
        refused = edge(guest, "gpio", "write", "mister", "on")
        assert refused["rc"] == 1 and REFUSED in refused["stderr"], refused
        assert guest.line_value(MISTER) == 0

        # full again: off, and the mister may be set on again
        guest.set_pull(TANK, "pull-up")
        assert read_json(guest) == (0.0, "high", "off (switch open: line high, pulled up)")
        done = edge(guest, "gpio", "write", "mister", "on")
        assert done["rc"] == 0, done
        assert guest.line_value(MISTER) == 1
    mister = [level for _, _, level in agent.sets(trace[0], {MISTER: "mister"})]
    assert mister == [1, 0, 1], trace[0][-2000:]
