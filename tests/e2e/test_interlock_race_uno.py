"""Interlocks hold for every caller at once, proven on the emulated Uno's own pins (issue 35).

Five doors switch an ``exclusive`` pair (heater D12, cooler D13) and an ``at_most = 2`` group of
four fans (D8..D11) at the same instant, round after round, as fast as they can: the model's tool
(``gpio_write``), the callers of the control socket, MQTT and a rule at the door
(:meth:`~edge.hardware.Hardware.write`), and the trip's path (``make_safe`` as
``interlock:pair``); the fans' ``max_on_seconds`` timer (10 ms) switches them off in between, and
the resident interlock watch runs all along.

The evidence is not the audit trail: it is what the simulated ATmega328P did with its port
registers, reported by the simavr front end for every output-pin change with the simulated time
(the CPU's cycle count), in the order the CPU made them across all pins
(:attr:`~tests.emulation.simavr.SimAvr.pin_reports`). Replaying those reports, the heater and the
cooler are never high together and never more than two fans are high, at any transition, not even
for one simulated microsecond. And the doors really raced: every round starts with all six off and
several doors ask for outputs of each group at once, so the refusals in the interlocks' words
(about 400 for the pair and 770 for the fans in 300 rounds, some in every round) are races lost.

Before the fix (the door of ``cc2cd99~1``: check, then switch later), this test saw 615 forbidden
states on the pins in 300 rounds (the pair both high 279 times, three fans high 336 times), each
lasting 0.5 to 13.5 ms of simulated time; with it, none in about 3,000 transitions.
"""

from __future__ import annotations

import asyncio
import random
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from edge.automation.assembly import Automation
from edge.config.loader import load_config
from edge.core.exc import PolicyDenied
from edge.core.requester import Requester
from edge.hardware import Hardware, build_hardware
from edge.tools.gpio import hardware_tools
from tests.emulation.simavr import SimAvr
from tests.helpers import asker

pytestmark = pytest.mark.emulator

ROUNDS = 300
PAIR = {"heater": "D12", "cooler": "D13"}
FANS = {"fan1": "D8", "fan2": "D9", "fan3": "D10", "fan4": "D11"}
OUTPUTS = {**PAIR, **FANS}
FANS_AT_MOST = 2

UNO = """
[boards.gpio]
pins = {{}}
aliases = {{}}
[boards.uno]
type = "arduino"
port = "{port}"
aliases = {{ heater = "D12", cooler = "D13", fan1 = "D8", fan2 = "D9", fan3 = "D10", fan4 = "D11" }}
[boards.uno.pins]
heater = {{ mode = "output", safe = "off", max_switches_per_minute = 6000 }}
cooler = {{ mode = "output", safe = "off", max_switches_per_minute = 6000 }}
fan1 = {{ mode = "output", safe = "off", max_switches_per_minute = 6000, max_on_seconds = 0.01 }}
fan2 = {{ mode = "output", safe = "off", max_switches_per_minute = 6000, max_on_seconds = 0.01 }}
fan3 = {{ mode = "output", safe = "off", max_switches_per_minute = 6000, max_on_seconds = 0.01 }}
fan4 = {{ mode = "output", safe = "off", max_switches_per_minute = 6000, max_on_seconds = 0.01 }}
[security]
autonomy = "full"
max_actuations_per_minute = 1000000

[[interlocks]]
name = "pair"
exclusive = ["heater", "cooler"]

[[interlocks]]
name = "fans"
at_most = 2
of = ["fan1", "fan2", "fan3", "fan4"]
"""

REFUSAL = re.compile(r"(?:heater|cooler|fan\d): refused by interlock (pair|fans) "
                     r"\((?:heater|cooler|fan\d)(?:, fan\d)* (?:is|are) on\)")
"""The interlock's words: ``cooler: refused by interlock pair (heater is on)``."""

Door = Callable[[str, bool], Awaitable[str | None]]
"""Switch an output on or off; None when it was set, else the refusal's words."""


def doors(hardware: Hardware) -> dict[str, Door]:
    """The callers that race, each as the real door calls the hardware."""
    gpio_write = next(tool for tool in hardware_tools(hardware) if tool.name == "gpio_write")

    async def model(pin: str, on: bool) -> str | None:
        result = await gpio_write.execute({"pin": pin, "value": "on" if on else "off"},
                                          asker("telegram:42", via_model=True))
        return None if result.success else result.text

    def at_the_door(requester: Requester) -> Door:
        async def switch(pin: str, on: bool) -> str | None:
            try:
                await hardware.write(pin, on, requester)
            except PolicyDenied as exc:
                return str(exc)
            return None
        return switch

    return {"model": model, "socket": at_the_door(Requester("local", "pi")),
            "mqtt": at_the_door(Requester("mqtt", "edge/uno/set")),
            "rule": at_the_door(Requester("rule", "cooling"))}


@dataclass
class Tally:
    refusals: dict[str, int] = field(default_factory=dict)
    """Interlock name -> refusals with its words."""
    raced_rounds: int = 0
    """Rounds in which a door lost a race from all-off (refused though nothing was on before)."""

    def count(self, answers: list[str | None]) -> int:
        refused = 0
        for answer in answers:
            if answer is None:
                continue
            words = REFUSAL.search(answer)
            assert words is not None, f"refused for another reason: {answer}"
            self.refusals[words[1]] = self.refusals.get(words[1], 0) + 1
            refused += 1
        return refused


async def race(hardware: Hardware, rounds: int, seed: int = 35) -> Tally:
    """Each round: from all off, every door asks for an output at once (each group contested:
    two doors for the pair's two outputs, the fans from all sides), the trip makes one safe
    meanwhile; then offs race ons; then all off."""
    chance = random.Random(seed)
    callers = doors(hardware)
    trip = Requester("interlock", "pair")
    tally = Tally()
    for _ in range(rounds):
        names = list(callers)
        chance.shuffle(names)
        pair = [*PAIR]
        chance.shuffle(pair)
        asks = [(names[0], pair[0]), (names[1], pair[1])]  # both of the pair at once
        asks += [(name, chance.choice([*FANS])) for name in names[2:]]
        asks += [(name, fan) for name, fan in zip(names, chance.sample([*FANS], 4), strict=True)]
        chance.shuffle(asks)
        steps: list[Awaitable[str | None]] = [callers[name](pin, True) for name, pin in asks]
        steps.insert(chance.randrange(len(steps) + 1), _safe(hardware, chance.choice([*OUTPUTS]),
                                                             trip))
        answers = await asyncio.gather(*steps)
        if tally.count(answers):
            tally.raced_rounds += 1
        # offs race ons: one output switched off while another door asks for its rival
        mixed = [callers[chance.choice(names)](pin, False) for pin in OUTPUTS]
        mixed += [callers[chance.choice(names)](chance.choice([*OUTPUTS]), True) for _ in range(3)]
        chance.shuffle(mixed)
        tally.count(await asyncio.gather(*mixed))
        await asyncio.gather(*(callers[chance.choice(names)](pin, False) for pin in OUTPUTS))
    return tally


async def _safe(hardware: Hardware, pin: str, trip: Requester) -> None:
    await hardware.make_safe(pin, trip)


def forbidden_states(reports: list[tuple[str, int, int]]) -> list[str]:
    """Replay the emulator's pin reports in the CPU's order; every time an interlock's group
    enters a state it forbids (both of the pair high, more than two fans high), what was high
    and for how many simulated microseconds."""
    names = {pin: name for name, pin in OUTPUTS.items()}
    groups = {"pair": (PAIR.keys(), 1), "fans": (FANS.keys(), FANS_AT_MOST)}
    high: set[str] = set()
    entered: dict[str, tuple[int, str]] = {}
    seen: list[str] = []
    for pin, level, at in reports:
        if pin not in names:
            continue
        (high.add if level else high.discard)(names[pin])
        for interlock, (members, limit) in groups.items():
            on = ", ".join(sorted(high & members))
            broken = len(high & members) > limit
            if broken and interlock not in entered:
                entered[interlock] = (at, on)
            elif not broken and interlock in entered:
                since, what = entered.pop(interlock)
                seen.append(f"{interlock}: {what} high for {at - since} us (at {since} us)")
    seen += [f"{interlock}: {what} high at the end (from {since} us)"
             for interlock, (since, what) in entered.items()]
    return seen


async def settled(uno: SimAvr, quiet: float = 0.3, timeout: float = 30.0) -> None:
    """Wait until the emulator has made every change sent (its reports stop coming) and all
    six outputs are low."""
    deadline = time.monotonic() + timeout
    count, since = -1, time.monotonic()
    while time.monotonic() < deadline:
        levels = {pin: 0 for pin in OUTPUTS.values()}
        for pin, level, _ in list(uno.pin_reports):
            levels[pin] = level
        if len(uno.pin_reports) != count:
            count, since = len(uno.pin_reports), time.monotonic()
        elif time.monotonic() - since > quiet and not any(levels.values()):
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"the emulated outputs did not settle low: {levels}")


async def test_racing_doors_never_drive_the_forbidden_state_on_the_emulated_pins(
        simavr_uno: SimAvr, write_config: Callable[[str], Path], isolated_env: dict[str, str]
        ) -> None:
    config = load_config(str(write_config(UNO.format(port=simavr_uno.link))),
                         env=isolated_env).config
    hardware = build_hardware(config, resident=True)
    automation = Automation(config, hardware)
    await hardware.start()
    await automation.start({}, {}, dict)  # the interlocks' watch (the trip) runs throughout
    try:
        started = len(simavr_uno.pin_reports)
        tally = await race(hardware, ROUNDS)
        await settled(simavr_uno)
    finally:
        await automation.aclose()
        await hardware.shutdown()
    reports = simavr_uno.pin_reports
    transitions = [r for r in reports[started:] if r[0] in OUTPUTS.values()]
    forbidden = forbidden_states(reports)
    assert not forbidden, (f"{len(forbidden)} forbidden states on the emulated pins in "
                           f"{ROUNDS} rounds ({len(transitions)} transitions): {forbidden[:10]}")
    # the pins really moved, and the doors really raced (each round starts with all off, so a
    # refusal in its first step is a race lost to a caller that asked at the same time)
    for pin in OUTPUTS.values():
        assert sum(1 for r in transitions if r[:2] == (pin, 1)) >= ROUNDS // 4, pin
    assert tally.raced_rounds >= ROUNDS * 9 // 10, tally
    assert tally.refusals["pair"] >= ROUNDS // 2 and tally.refusals["fans"] >= ROUNDS, tally
