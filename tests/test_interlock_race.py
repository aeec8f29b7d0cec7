"""Never on together, proven by watching the pins, not the audit trail (issue 35, part 1).

A real agent runs in this loop on gpiozero's mock pins, with six outputs (safe off) under two
interlocks: ``heat-or-cool`` (``exclusive``: heater, cooler) and ``psu`` (``at_most = 2`` of
valve1..valve4; valve1 stays on, so there is room for one more). Every pair of its nine doors
(chat, the model's tool, edge-cli through the control socket, MQTT, MCP over HTTP, MCP over
stdio, a rule, a schedule, the trip) asks at the same instant for the two outputs the interlock
has room for only one of (heater and cooler; valve2 and valve3), 1,000 rounds, each as soon as
the last is answered; the trip's half of a round is the interlocks' watch driving an output that
is on to its safe level while the other door asks for the second. Each door's pace is measured
as it goes and the faster one of a pair held back by the difference (give or take a sweep of
offsets), so that the two arrive together.

Underneath, every change of every pin's level is on one tape, in order, with its time
(:class:`tests.interlock_watch.WatchedFactory`). Replayed, the tape never shows a forbidden state:
heater and cooler on, or three valves on, not at one transition, however briefly.

And so that this proves something:

- in every pair, rounds raced: both callers were inside the hardware's door at once;
- every round of two switches ends with one "set on" and one refusal naming the interlock, in the
  words that door's caller reads (the chat reply, the tool result, edge-cli's answer, the MQTT
  ``refused`` topic, the MCP tool error; for a rule, a schedule and the trip, what the door told
  them), and in every pair with the trip, the other door was refused at least once;
- the pins agree with the answers after every round;
- the watch itself sees a forbidden state made behind the door's back (the last test).

Run against the door as it was before the fix (cc2cd99~1: the interlocks checked, the write a
step later), this test saw 74 to 83 forbidden states in each of five runs, in 18 to 21 of the 28
pairs that can make one (the trip only ever switches off), each lasting 0.7 to 4.6 ms until the
watch tripped the extra output off.
"""

from __future__ import annotations

import itertools
import statistics
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import pytest

from edge.automation.clock import ManualClock
from edge.core.requester import Requester
from edge.hardware import Hardware
from tests.fakes.inprocess import RunningAgent
from tests.fakes.mosquitto import Mosquitto, Watcher, free_port
from tests.fakes.telegram_server import FakeTelegram, telegram_config
from tests.helpers import until
from tests.interlock_doors import Asked, Door, EdgeCliDoor, Pace, ScheduleDoor, open_doors, race
from tests.interlock_watch import DoorVisits, Transition, WatchedFactory

ROUNDS = 1000
COMMAND_EVERY = 8
"""edge-cli through the socket: its client, and in every 8th round of its pairs the command."""
SKEWS_US = (0, 50, -50, 150, -150, 400, -400, 1000, -1000)
"""Offsets swept over a pair's rounds, around the instant both should arrive at the door."""
MIN_RACED = 7
"""Of a pair's 27 or 28 rounds, at least a quarter raced (both inside the door at once): 14 or
more did on two cores kept busy by two other processes; a pair short of it goes on, up to
:data:`TOP_UP_ROUNDS` rounds in all."""
TOP_UP_ROUNDS = 200
BASE = "edge-agent/race"
OUTPUTS = {"heater": 23, "cooler": 24, "valve1": 16, "valve2": 20, "valve3": 21, "valve4": 12}
KEYS = {"heater": 6, "cooler": 13, "valve2": 19, "valve3": 26}
"""Each rule's input: its rising edge switches the pin of the same name on."""
STOP = 5
"""The trip's input: while it is on, heater and valve2 are forbidden (and so tripped)."""
SETUP = Requester("test", "setup")


@dataclass(frozen=True)
class Group:
    interlock: str
    members: tuple[str, ...]
    limit: int
    racing: tuple[str, str]
    """The two outputs asked for together; room for one. The trip takes the first."""
    standing: tuple[str, ...] = ()
    """On before each round."""


HEAT = Group("heat-or-cool", ("heater", "cooler"), 1, ("heater", "cooler"))
PSU = Group("psu", ("valve1", "valve2", "valve3", "valve4"), 2, ("valve2", "valve3"), ("valve1",))
GROUPS = (HEAT, PSU)


def config(telegram: FakeTelegram, broker: Mosquitto, mcp_port: int) -> str:
    """The agent: Telegram, MQTT and MCP over HTTP on loopback; no budget that refuses first."""
    outputs = "".join(f'{name} = {{ mode = "output", safe = "off", '
                      'max_switches_per_minute = 6000 }\n' for name in OUTPUTS)
    inputs = "".join(f'key_{name} = {{ mode = "input", pull = "down" }}\n' for name in KEYS)
    aliases = "".join(f'{name} = "GPIO{n}"\n' for name, n in OUTPUTS.items()) + "".join(
        f'key_{name} = "GPIO{n}"\n' for name, n in KEYS.items())
    rules = "".join(f'\n[[rules]]\nname = "press-{name}"\nwhen = "key_{name} rising"\n'
                    f'cooldown_seconds = 0\nthen = "gpio write {name} on"\n' for name in KEYS)
    return telegram_config(telegram, extra="rate_limit_per_minute = 100000") + f"""
[security]
autonomy = "full"
max_actuations_per_minute = 100000
[mqtt]
url = "{broker.url}"
node_id = "race"
[mcp]
listen = "127.0.0.1:{mcp_port}"
[boards.gpio.aliases]
{aliases}stop = "GPIO{STOP}"
[boards.gpio.pins]
{outputs}{inputs}stop = {{ mode = "input", pull = "down" }}

[[interlocks]]
name = "heat-or-cool"
exclusive = ["heater", "cooler"]

[[interlocks]]
name = "psu"
at_most = 2
of = ["valve1", "valve2", "valve3", "valve4"]

[[interlocks]]
name = "stop-heat"
forbid = "heater on"
while = "stop on"

[[interlocks]]
name = "stop-valve"
forbid = "valve2 on"
while = "stop on"
{rules}{ScheduleDoor.config()}"""


# what the pins did ------------------------------------------------------------------------


@dataclass
class Overstep:
    """A span of the tape in a forbidden state: which interlock, the pins on, from, to (ns)."""

    interlock: str
    pins: tuple[str, ...]
    began: int
    ended: int | None = None


def forbidden_states(tape: list[Transition], groups: tuple[Group, ...] = GROUPS) -> list[Overstep]:
    """Replay ``tape`` (every pin's level after each transition) and return each span in which a
    group had more outputs on than its interlock allows."""
    lines = {name: f"GPIO{n}" for name, n in OUTPUTS.items()}
    levels: dict[str, float] = {}
    open_: dict[str, Overstep] = {}
    found: list[Overstep] = []
    for transition in tape:
        levels[transition.pin] = transition.level
        for group in groups:
            on = tuple(name for name in group.members if levels.get(lines[name], 0.0) > 0)
            if len(on) > group.limit and group.interlock not in open_:
                open_[group.interlock] = Overstep(group.interlock, on, transition.ns)
                found.append(open_[group.interlock])
            elif len(on) <= group.limit and group.interlock in open_:
                open_.pop(group.interlock).ended = transition.ns
    return found


# a round ------------------------------------------------------------------------------------


@dataclass
class Pair:
    doors: tuple[Door, Door]
    rounds: int = 0
    raced: int = 0
    """Rounds in which both callers were inside the hardware's door at once."""
    refused: int = 0
    commands: int = 0
    """Rounds in which edge-cli was the real command."""
    gaps: list[int] = field(default_factory=list)
    """Each round's time between the two entering the hardware's door (ns)."""
    windows: list[tuple[int, int]] = field(default_factory=list)
    """Each round's span (``perf_counter_ns``), from the first ask to the last answer."""
    problems: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return " + ".join(d.name for d in self.doors)


def plan(doors: tuple[Door, Door], index: int) -> tuple[Group, tuple[tuple[Door, str], ...]]:
    """The group and who asks for which output in a pair's ``index``-th round: groups and sides
    take turns; the trip takes the output it trips; a schedule the output its next minute names."""
    schedule = next((d for d in doors if isinstance(d, ScheduleDoor)), None)
    group = GROUPS[index % 2]
    if schedule is not None:
        pin = schedule.next_pin()
        group = next(g for g in GROUPS if pin in g.racing)
        other = next(p for p in group.racing if p != pin)
        return group, tuple((d, pin if d is schedule else other) for d in doors)
    if any(d.trips for d in doors):
        return group, tuple((d, group.racing[0] if d.trips else group.racing[1]) for d in doors)
    flip = (index // 2) % 2
    return group, ((doors[0], group.racing[flip]), (doors[1], group.racing[1 - flip]))


async def prepare(hardware: Hardware, factory: WatchedFactory, on: set[str]) -> None:
    """Every output to its place before a round (``on``: on; the rest off), through the door;
    the outputs that go off first, so that no interlock refuses the rest."""
    for level in (False, True):
        for name, n in OUTPUTS.items():
            if (name in on) is level and bool(factory.pin(n).state) != level:
                await hardware.write(name, level, SETUP)


def judge(group: Group, done: list[Asked], factory: WatchedFactory) -> list[str]:
    """What is wrong with a round's answers and the pins after it (nothing, with the fix)."""
    level = {a.pin: bool(factory.pin(OUTPUTS[a.pin]).state) for a in done}
    refusal = f"refused by interlock {group.interlock}"
    problems = [f"{a.door.name} asked {a.pin}: {a.answer.words!r}, but the pin is "
                f"{'on' if level[a.pin] else 'off'}" for a in done
                if level[a.pin] == (a.answer.refused or a.door.trips)]
    problems += [f"{a.door.name} asked {a.pin}: refused without naming {group.interlock}: "
                 f"{a.answer.words!r}" for a in done
                 if a.answer.refused and refusal not in a.answer.words]
    if any(a.door.trips for a in done):
        problems += [f"the trip was refused: {a.answer.words!r}" for a in done
                     if a.door.trips and a.answer.refused]
    elif sum(a.answer.refused for a in done) != 1:
        problems.append(f"room for one, and {sum(not a.answer.refused for a in done)} were set "
                        "on: " + "; ".join(f"{a.door.name}: {a.answer.words!r}" for a in done))
    return problems


async def one_round(pair: Pair, index: int, pace: Pace, hardware: Hardware,
                    factory: WatchedFactory, visits: DoorVisits) -> None:
    """A pair's ``index``-th round: the outputs to their places, both doors asked together,
    the answers judged against each other and the pins."""
    schedule = next((d for d in pair.doors if isinstance(d, ScheduleDoor)), None)
    if schedule is not None and any(d.trips for d in pair.doors):
        while schedule.next_pin() in (g.racing[0] for g in GROUPS):  # the trip's, not a race
            await schedule.ask(schedule.next_pin())
    for door in pair.doors:
        if isinstance(door, EdgeCliDoor):
            door.command = index % COMMAND_EVERY == COMMAND_EVERY // 2
            pair.commands += door.command
    group, asks = plan(pair.doors, index)
    await prepare(hardware, factory, {*PSU.standing, *(pin for door, pin in asks if door.trips)})
    began = time.perf_counter_ns()
    done = await race(asks, pace, SKEWS_US[index % len(SKEWS_US)], visits)
    pair.windows.append((began, max(a.visit.left for a in done)))
    pair.rounds += 1
    a, b = (d.visit for d in done)
    pair.gaps.append(abs(a.entered - b.entered))
    pair.raced += max(a.entered, b.entered) < min(a.left, b.left)
    pair.refused += any(d.answer.refused for d in done)
    pair.problems += judge(group, done, factory)


async def warm_up(doors: list[Door], pace: Pace, hardware: Hardware, factory: WatchedFactory,
                  visits: DoorVisits) -> None:
    """Each door asked once alone: the first of everything loads, and each one's pace is known."""
    for door in doors:
        pin = door.next_pin() if isinstance(door, ScheduleDoor) else HEAT.racing[0]
        await prepare(hardware, factory, {*PSU.standing, pin} if door.trips else {*PSU.standing})
        way, asked = door.way, time.perf_counter_ns()
        answer = await door.ask(pin)
        pace.learn(Asked(door, way, pin, asked, answer,
                         await visits.finished(door.caller, pin, asked)))


def turns(pairs: list[Pair]) -> Iterator[tuple[int, Pair]]:
    """(round index, pair), the pairs taking turns, until there have been ``ROUNDS``."""
    share = [ROUNDS // len(pairs) + (i < ROUNDS % len(pairs)) for i in range(len(pairs))]
    for index in range(max(share)):
        yield from ((index, pair) for pair, rounds in zip(pairs, share, strict=True)
                    if index < rounds)


def during(pairs: list[Pair], ns: int) -> str:
    """Whose round it was at ``ns``."""
    return next((p.name for p in pairs for began, ended in p.windows if began <= ns <= ended),
                "between rounds")


def figures(pairs: list[Pair], oversteps: list[Overstep], sampled: int) -> str:
    """What the race did, in numbers: the whole, then each pair."""
    rounds, doors = sum(p.rounds for p in pairs), {d.name for p in pairs for d in p.doors}
    gap = statistics.median(g for p in pairs for g in p.gaps) / 1000
    lines = [f"interlock race: {rounds} rounds, {len(doors)} doors, {len(pairs)} pairs, "
             f"{sampled} transitions of the outputs sampled, {len(oversteps)} forbidden states; "
             f"{sum(p.raced for p in pairs)} rounds raced (median gap entering the door "
             f"{gap:.0f} us), {sum(p.refused for p in pairs)} with a refusal, "
             f"{sum(p.commands for p in pairs)} by the real edge-cli"]
    lines += [f"  {p.name}: {p.rounds} rounds, {p.raced} raced (median gap "
              f"{statistics.median(p.gaps) / 1000:.0f} us), {p.refused} refused, "
              f"{sum(during(pairs, o.began) == p.name for o in oversteps)} forbidden"
              for p in pairs]
    return "\n".join(lines)


# the tests ----------------------------------------------------------------------------------


@pytest.fixture
def mock_factory() -> Iterator[WatchedFactory]:
    """The agent's pins, each change of level on the factory's tape."""
    factory = WatchedFactory()
    yield factory
    factory.reset()


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Mosquitto]:
    """A real Mosquitto, set as the README asks of a broker (no Nagle delay: 40 ms a message)."""
    broker = Mosquitto(tmp_path / "broker")
    with broker.conf.open("a") as conf:
        conf.write("set_tcp_nodelay true\n")
    with broker as running:
        yield running


async def test_no_two_doors_at_once_ever_put_the_pins_in_a_forbidden_state(
        telegram: FakeTelegram, broker: Mosquitto,  # asked first: they outlive the agent
        start_agent: Callable[..., Awaitable[RunningAgent]], mock_factory: WatchedFactory,
        write_config: Callable[[str], Path], isolated_env: dict[str, str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    clock = ManualClock(datetime(2026, 11, 29, 12, 0, 30, tzinfo=UTC))
    mcp_port = free_port()
    text = config(telegram, broker, mcp_port)
    runtime = (await start_agent(text, clock=clock)).runtime
    await until(lambda: runtime.mqtt is not None and runtime.mqtt.connected)
    visits = DoorVisits(runtime.hardware, monkeypatch)
    pace = Pace()
    async with AsyncExitStack() as stack:
        doors = await open_doors(
            stack, tools=runtime.tools, socket=runtime.loaded.control_socket,
            env={**isolated_env, "EDGE_CONFIG": str(write_config(text))}, telegram=telegram,
            watcher=Watcher(broker, f"{BASE}/#"), mqtt_base=BASE, mcp_port=mcp_port,
            factory=mock_factory, visits=visits, clock=clock, keys=KEYS, stop=STOP)
        await warm_up(doors, pace, runtime.hardware, mock_factory, visits)
        pairs = [Pair(two) for two in itertools.combinations(doors, 2)]
        for index, pair in turns(pairs):
            await one_round(pair, index, pace, runtime.hardware, mock_factory, visits)
        # a pair whose rounds seldom overlapped (a loaded machine stretches one door's pace)
        # goes on until enough did, so every pair is proven raced, however busy the machine
        extra = 0
        for pair in pairs:
            index = pair.rounds
            while pair.raced < MIN_RACED and index < TOP_UP_ROUNDS:
                await one_round(pair, index, pace, runtime.hardware, mock_factory, visits)
                index, extra = index + 1, extra + 1

    lines = {f"GPIO{n}" for n in OUTPUTS.values()}
    sampled = sum(t.pin in lines for t in mock_factory.tape) - len(lines)  # less each one's start
    oversteps = forbidden_states(mock_factory.tape)
    print("\n" + figures(pairs, oversteps, sampled))
    assert not oversteps, f"{len(oversteps)} forbidden states on the pins: " + "; ".join(
        f"{o.interlock} {'+'.join(o.pins)} for "
        f"{'ever' if o.ended is None else f'{(o.ended - o.began) / 1e6:.3f} ms'} "
        f"({during(pairs, o.began)})" for o in oversteps[:20])
    assert (len(doors), len(pairs), sum(p.rounds for p in pairs)) == (9, 36, ROUNDS + extra)
    assert not [p for pair in pairs for p in pair.problems], "\n".join(
        f"{pair.name}: {p}" for pair in pairs for p in pair.problems[:5])
    assert all(pair.raced >= MIN_RACED for pair in pairs), [
        (pair.name, pair.raced) for pair in pairs if pair.raced < MIN_RACED]
    assert all(pair.refused for pair in pairs), [pair.name for pair in pairs if not pair.refused]
    assert sum(p.commands for p in pairs) >= 8 * 3  # each pair with edge-cli: the command too


def test_the_watch_sees_a_forbidden_state_made_behind_the_doors() -> None:
    """The tape is the pins' own: two outputs of ``heat-or-cool`` set on directly, for however
    short a time, are a forbidden state, and so are three valves."""
    factory = WatchedFactory()
    heater, cooler, *valves = (factory.pin(OUTPUTS[name]) for name in
                               ("heater", "cooler", "valve1", "valve2", "valve3"))
    for pin in (heater, cooler, *valves):
        pin.function = "output"
    heater.state = 1
    cooler.state = 1
    heater.state = 0
    for valve in valves:
        valve.state = 1
    [both, three] = forbidden_states(factory.tape)
    assert (both.interlock, both.pins) == ("heat-or-cool", ("heater", "cooler"))
    assert both.ended is not None and both.ended > both.began
    assert (three.interlock, three.pins, three.ended) == ("psu", ("valve1", "valve2", "valve3"),
                                                          None)
    assert len(factory.tape) == 5 + 6  # each pin as it was made, then every change
