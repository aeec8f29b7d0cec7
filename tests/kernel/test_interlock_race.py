"""Interlocks hold for two doors at once on a real kernel GPIO chip, proven by the kernel's own
record of the lines (issue 35).

An agent runs in the guest (``simulate = false``, lgpio on gpio-sim's ``/dev/gpiochip0``) with
``exclusive = ["heater", "cooler"]``. One small client process in the guest opens two
connections to its control socket and, round after round, asks on both at the same instant
(released together by a barrier): one as the local user (``local:root``, the door ``edge-cli``
uses) and one as an MCP client (``"as": "mcp:racer"``, the door ``edge-cli mcp`` uses), each for
a different output of the pair, alternating which asks for which; then both switch theirs off.
The agent's interlock watch (the trip) runs throughout.

The evidence is not the audit trail: the kernel's ``gpio_value`` trace events (tracefs), which
gpiolib emits for every value set on a line, whoever sets it, in the order the one vCPU set them,
with the kernel's timestamps. Replaying every ``set`` of the two lines, the heater and the cooler
are never high together at any transition. And the doors really raced: every round starts with
both off, each door's request is sent before the other's is answered (both are in the agent at
once), and in every round one of the two is refused with the interlock's words.

Before the fix (the door of ``cc2cd99~1``: check, then switch later) this test saw both lines
high in 94 of 100 rounds, for 15 to 56 ms each (median 22 ms) until the trip turned one off; with
it, none in 300 traced sets. The agent runs the checkout that holds this file (``python -m edge
run`` from it), so that is the code under test. The guest's kernel has tracing (tracefs), so the
polling line watcher (linewatch.c), which can miss a short state, is not needed here.
"""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Iterator

import pytest

from tests.kernel.agent import TracedAgent, gpio_board, traced_agent
from tests.kernel.guest import PYTHON, KernelGuest

ROUNDS = 100
HEATER, COOLER = 23, 24  # BCM offsets no other kernel test uses
HOME = "/tmp/edge-race"
CONFIG = f"{HOME}/config.toml"
STATE = f"{HOME}/state"
SOCKET = f"{STATE}/control.sock"
ENV = {"EDGE_CONFIG": CONFIG, "EDGE_MEMORY__EMBEDDER": "none", "HOME": HOME}

AGENT_CONFIG = gpio_board(STATE) + f"""
[boards.gpio.aliases]
heater = "GPIO{HEATER}"
cooler = "GPIO{COOLER}"

[boards.gpio.pins]
heater = {{ mode = "output", safe = "off", max_switches_per_minute = 6000 }}
cooler = {{ mode = "output", safe = "off", max_switches_per_minute = 6000 }}

[security]
autonomy = "full"
max_actuations_per_minute = 1000000

[[interlocks]]
name = "pair"
exclusive = ["heater", "cooler"]
"""

RACER = textwrap.dedent("""
    import json, socket, sys, threading, time
    path, rounds = sys.argv[1], int(sys.argv[2])
    together = threading.Barrier(2)
    answers = {"local": [], "mcp": []}
    in_flight = {"local": [], "mcp": []}  # (sent, answered) of each round's "on"

    def door(name, caller, first):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(path)
        replies = sock.makefile("rb")

        def ask(pin, value):
            request = {"op": "gpio.write", "args": {"pin": pin, "value": value}}
            if caller:
                request["as"] = caller
            sock.sendall(json.dumps(request).encode() + b"\\n")
            reply = json.loads(replies.readline())
            return None if reply["ok"] else reply["error"]

        for round in range(rounds):
            pin = ("heater", "cooler")[(round + first) % 2]
            together.wait()
            sent = time.monotonic()
            answers[name].append(ask(pin, "on"))
            in_flight[name].append((sent, time.monotonic()))
            together.wait()
            ask(pin, "off")
        sock.close()

    doors = [threading.Thread(target=door, args=("local", None, 0)),
             threading.Thread(target=door, args=("mcp", "mcp:racer", 1))]
    for thread in doors:
        thread.start()
    for thread in doors:
        thread.join()
    overlapping = sum(1 for (a, b), (c, d) in zip(in_flight["local"], in_flight["mcp"])
                      if a < d and c < b)
    print(json.dumps({"answers": answers, "overlapping": overlapping}))
""")

@pytest.fixture(scope="module")
def agent(kernel_guest: KernelGuest) -> Iterator[TracedAgent]:
    """The agent with the exclusive pair, ready (its interlock watch running), from this
    checkout; the kernel's gpio trace events mounted and off."""
    with traced_agent(kernel_guest, "agent-interlock-race", HOME, AGENT_CONFIG, ENV) as running:
        yield running


def both_high(sets: list[tuple[float, str, int]]) -> list[str]:
    """Every time the trace shows both lines set high, and for how long (kernel time)."""
    high: set[str] = set()
    since: float | None = None
    seen = []
    for at, name, level in sets:
        (high.add if level else high.discard)(name)
        if len(high) == 2 and since is None:
            since = at
        elif len(high) < 2 and since is not None:
            seen.append(f"both high for {(at - since) * 1e3:.2f} ms (at {since:.6f} s)")
            since = None
    if since is not None:
        seen.append(f"both high at the end (from {since:.6f} s)")
    return seen


def test_two_doors_at_once_never_set_both_lines_of_an_exclusive_pair_high(
        agent: TracedAgent) -> None:
    guest = agent.guest
    assert guest.line_value(HEATER) == 0 and guest.line_value(COOLER) == 0
    with agent.traced() as trace:
        race = guest.run([str(PYTHON), "-S", "-c", RACER, SOCKET, str(ROUNDS)], timeout=300)
    assert race["rc"] == 0, race["stderr"]
    answers = json.loads(race["stdout"])["answers"]
    sets = agent.sets(trace[0], {HEATER: "heater", COOLER: "cooler"})
    forbidden = both_high(sets)
    assert not forbidden, (f"{len(forbidden)} times both lines high in {ROUNDS} rounds "
                           f"({len(sets)} sets traced): {forbidden[:10]}")
    # the kernel saw every switch: each round one of the pair went high and back low
    assert [level for _, _, level in sets].count(1) == ROUNDS, sets[:20]
    # both doors asked at once from all off, each "on" sent before the other's was answered (in
    # flight in the agent together); in every round exactly one was refused, in the
    # interlock's words, and each door won some rounds
    assert json.loads(race["stdout"])["overlapping"] >= ROUNDS * 9 // 10, race["stdout"]
    refusals = [(door, answer) for door, replies in answers.items() for answer in replies
                if answer is not None]
    assert len(refusals) == ROUNDS, refusals
    assert all(re.fullmatch(r"(heater|cooler): refused by interlock pair \((cooler|heater) is on\)",
                            answer) for _, answer in refusals), refusals
    assert {door for door, _ in refusals} == {"local", "mcp"}, refusals
