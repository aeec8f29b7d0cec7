"""Every door to the pins, driven the way its callers drive it, and two of them asked at once:
the doors of the interlock race (tests/test_interlock_race.py).

One :class:`Door` for each way in, each asking the agent for a pin as its callers do: chat (a
``/gpio`` command through the loopback Telegram Bot API), the model's tool (``gpio_write`` as the
agent's tool loop calls it, for a person through the model), ``edge-cli`` through the control
socket (edge-cli's own client, or the real command), MQTT (a ``/set`` on a real Mosquitto), MCP
over HTTP and over stdio (``edge-cli mcp``; the MCP SDK's own clients), a rule (an input's rising
edge), a schedule (its cron minute on a manual clock) and the trip (the interlocks' watch driving
an output to its safe level when a ``while`` comes true).

:func:`race` asks two of them so that both reach the hardware's door at the same moment (give or
take an offset), learning each one's pace as it goes (:class:`Pace`).
"""

from __future__ import annotations

import asyncio
import json
import socket as socket_module
import time
from collections.abc import AsyncIterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from pathlib import Path

from mcp import types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from edge.automation.clock import ManualClock
from edge.control.client import request
from edge.control.ops import OpResult
from edge.core.requester import Requester
from edge.mqtt.link import client_socket
from edge.tools.base import Tool
from tests.fakes.mosquitto import Watcher
from tests.fakes.telegram_server import FakeTelegram, texts_to
from tests.helpers import EDGE_CLI, ROOT
from tests.interlock_watch import ANSWER_SECONDS, DoorVisits, Visit, WatchedFactory, soon

# the doors ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Answer:
    refused: bool
    words: str
    """What the caller was told: the reply, the tool's result, the refusal's words."""


class Door:
    """One way in. :meth:`ask` asks for ``pin`` on (the trip: drives it to its safe level) and
    returns what this door tells its caller; ``caller`` is how the hardware names the callers
    that come through it (the start of ``Requester.caller``)."""

    name = ""
    caller = ""
    trips = False
    """True for the trip: it drives an output that is on to its safe level (off)."""

    @property
    def way(self) -> str:
        """How the next :meth:`ask` goes (one door may have two, each with its own pace)."""
        return self.name

    async def ask(self, pin: str) -> Answer:
        raise NotImplementedError


class ChatDoor(Door):
    """``/gpio PIN on`` from an allowed Telegram user, answered in that chat."""

    name = "chat"

    def __init__(self, telegram: FakeTelegram, user: int = 42):
        self.telegram, self.user = telegram, user
        self.caller = f"telegram:{user}"

    async def ask(self, pin: str) -> Answer:
        before = len(texts_to(self.telegram, self.user))
        self.telegram.push_message(self.user, f"/gpio {pin} on")
        text = await soon(lambda: texts[before] if len(texts := texts_to(self.telegram, self.user))
                          > before else None)
        return Answer(text.startswith("Error:"), text)


class ModelToolDoor(Door):
    """The model's ``gpio_write`` tool, called as the agent's tool loop calls it: for a person,
    through the model (``via_model``; autonomy ``full`` needs no approval)."""

    name = "model"
    caller = "telegram:43"

    def __init__(self, tools: Mapping[str, Tool]):
        self.tool = tools["gpio_write"]
        self.requester = Requester("telegram", "43", "43", via_model=True, why="turn 1")

    async def ask(self, pin: str) -> Answer:
        result = await self.tool.execute({"pin": pin, "value": "on"}, self.requester)
        return Answer(not result.success, result.text)


class EdgeCliDoor(Door):
    """``edge-cli gpio write PIN on`` through the control socket: edge-cli's own client (in a
    thread of its own, as the blocking client it is), or, when :attr:`command` says so, the
    real command, a process of its own (``--json``, exit 1 when refused)."""

    name = "edge-cli"
    caller = "local:"

    def __init__(self, socket: Path, env: dict[str, str]):
        self.socket, self.env = socket, env
        self.command = False
        """The next :meth:`ask` runs the real command."""
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="edge-cli-door")

    @property
    def way(self) -> str:
        return "edge-cli command" if self.command else "edge-cli socket"

    async def ask(self, pin: str) -> Answer:
        if self.command:
            return await self._command(pin)
        ask = partial(request, [self.socket], "gpio.write", {"pin": pin, "value": "on"})
        result = OpResult.from_dict(await asyncio.get_running_loop().run_in_executor(
            self._thread, ask))
        return Answer(not result.ok, result.message)

    async def _command(self, pin: str) -> Answer:
        process = await asyncio.create_subprocess_exec(
            *EDGE_CLI, "gpio", "write", pin, "on", "--json", env=self.env, cwd=ROOT,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await process.communicate()
        result = OpResult.from_dict(json.loads(out))
        assert process.returncode == result.exit_code, err.decode()
        return Answer(not result.ok, result.message)

    def close(self) -> None:
        self._thread.shutdown()


class MqttDoor(Door):
    """``ON`` on ``<base>/PIN/set``; the answer is what the door told the command, and a refusal
    must also reach ``<base>/refused`` in the same words. (The pin's state topic is no answer:
    the previous round's ``ON`` may still be on its way to the watcher when this round asks.)"""

    name = "mqtt"
    caller = "mqtt:"

    def __init__(self, watcher: Watcher, base: str, visits: DoorVisits):
        self.watcher, self.base, self.visits = watcher, base, visits

    async def ask(self, pin: str) -> Answer:
        mark, since = len(self.watcher.messages), time.perf_counter_ns()
        await self.watcher.publish(f"{self.base}/{pin}/set", "ON")
        visit = await self.visits.finished(self.caller, pin, since)
        if visit.refusal is None:
            return Answer(False, "ON")
        return Answer(True, await soon(lambda: self._refused(pin, mark)))

    def _refused(self, pin: str, mark: int) -> str | None:
        for topic, payload, _ in self.watcher.messages[mark:]:
            if topic == f"{self.base}/refused" and (body := json.loads(payload))["pin"] == pin:
                return str(body["reason"])
        return None


class McpDoor(Door):
    """The MCP tool ``pin_write``, called by the MCP SDK's client session as ``client``."""

    def __init__(self, name: str, session: ClientSession, client: str):
        self.name, self.session = name, session
        self.caller = f"mcp:{client}"

    async def ask(self, pin: str) -> Answer:
        result = await self.session.call_tool("pin_write", {"pin": pin, "value": "on"})
        words = "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))
        return Answer(bool(result.is_error), words)


class RuleDoor(Door):
    """A rule ``when = "key_PIN rising"`` ``then = "gpio write PIN on"``, fired by driving its
    input (pulled down) high; its answer is what the door told the rule."""

    name = "rule"
    caller = "rule:"

    def __init__(self, factory: WatchedFactory, visits: DoorVisits, keys: Mapping[str, int]):
        self.factory, self.visits, self.keys = factory, visits, keys

    async def ask(self, pin: str) -> Answer:
        since = time.perf_counter_ns()
        key = self.factory.pin(self.keys[pin])
        key.drive_high()
        visit = await self.visits.finished(self.caller, pin, since)
        key.drive_low()  # a falling edge: the rule waits for the next press
        return Answer(visit.refusal is not None, visit.refusal or f"{pin} set on")


class ScheduleDoor(Door):
    """Schedules ``at-PIN`` whose cron minutes take turns (minute % 4 names the pin, in
    ``ORDER``), fired by moving the agent's manual clock to the next minute; the answer is what
    the door told the job. :meth:`next_pin` says which one the next minute fires."""

    name = "schedule"
    caller = "schedule:"
    ORDER = ("heater", "cooler", "valve2", "valve3")

    def __init__(self, clock: ManualClock, visits: DoorVisits):
        self.clock, self.visits = clock, visits

    @classmethod
    def config(cls) -> str:
        """The ``[[schedules]]``: one for each pin, on the minutes that name it."""
        return "".join(f'\n[[schedules]]\nname = "at-{pin}"\ncron = "{index}-59/4 * * * *"\n'
                       f'timezone = "UTC"\naction = "gpio write {pin} on"\n'
                       for index, pin in enumerate(cls.ORDER))

    def _next_minute(self) -> datetime:
        return self.clock.now().replace(second=0, microsecond=0) + timedelta(minutes=1)

    def next_pin(self) -> str:
        return self.ORDER[self._next_minute().minute % len(self.ORDER)]

    async def ask(self, pin: str) -> Answer:
        assert pin == self.next_pin(), f"the next minute fires at-{self.next_pin()}, not at-{pin}"
        since = time.perf_counter_ns()
        await self.clock.advance_to(self._next_minute())
        visit = await self.visits.finished(f"{self.caller}at-{pin}", pin, since)
        return Answer(visit.refusal is not None, visit.refusal or f"{pin} set on")


class TripDoor(Door):
    """The interlocks' watch: driving ``stop`` (pulled down) high makes ``forbid = "PIN on"``
    ``while = "stop on"`` true, and the watch drives ``PIN`` to its safe level (off) as
    ``interlock:NAME``; ``stop`` goes low again once it has."""

    name = "trip"
    caller = "interlock:"
    trips = True

    def __init__(self, factory: WatchedFactory, visits: DoorVisits, stop: int):
        self.factory, self.visits, self.stop = factory, visits, stop

    async def ask(self, pin: str) -> Answer:
        since = time.perf_counter_ns()
        stop = self.factory.pin(self.stop)
        stop.drive_high()
        visit = await self.visits.finished(self.caller, pin, since)
        stop.drive_low()
        return Answer(visit.refusal is not None, visit.refusal or f"{pin} driven to its safe level")


# sessions ---------------------------------------------------------------------------------


@asynccontextmanager
async def mcp_over_stdio(env: dict[str, str], client: str) -> AsyncIterator[ClientSession]:
    """``edge-cli mcp`` as an MCP client runs it (one process for the whole session)."""
    params = StdioServerParameters(command=EDGE_CLI[0], args=[*EDGE_CLI[1:], "mcp"], env=env,
                                   cwd=ROOT)
    info = types.Implementation(name=client, version="1")
    async with (stdio_client(params) as (read, write),
                ClientSession(read, write, client_info=info) as session):
        await session.initialize()
        yield session


@asynccontextmanager
async def mcp_over_http(port: int, client: str) -> AsyncIterator[ClientSession]:
    """The agent's ``[mcp] listen`` on loopback (no token: the caller is ``mcp:<client>``)."""
    for _ in range(1000):
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            await asyncio.sleep(0.01)
            continue
        writer.close()
        break
    info = types.Implementation(name=client, version="1")
    async with (create_mcp_http_client() as http,
                streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http)
                as (read, write),
                ClientSession(read, write, client_info=info) as session):
        await session.initialize()
        yield session


async def open_doors(stack: AsyncExitStack, *, tools: Mapping[str, Tool], socket: Path,
                     env: dict[str, str], telegram: FakeTelegram, watcher: Watcher,
                     mqtt_base: str, mcp_port: int, factory: WatchedFactory,
                     visits: DoorVisits, clock: ManualClock, keys: Mapping[str, int],
                     stop: int) -> list[Door]:
    """Every door, opened on ``stack`` (its clients and sessions close with it)."""
    cli = EdgeCliDoor(socket, env)
    stack.callback(cli.close)
    await stack.enter_async_context(watcher)
    if (sock := client_socket(watcher.client)) is not None:  # its acks would hold its commands
        sock.setsockopt(socket_module.IPPROTO_TCP, socket_module.TCP_NODELAY, 1)  # back 40 ms
    http = await stack.enter_async_context(mcp_over_http(mcp_port, "http-client"))
    stdio = await stack.enter_async_context(mcp_over_stdio(env, "stdio-client"))
    return [ChatDoor(telegram), ModelToolDoor(tools), cli, MqttDoor(watcher, mqtt_base, visits),
            McpDoor("mcp-http", http, "http-client"), McpDoor("mcp-stdio", stdio, "stdio-client"),
            RuleDoor(factory, visits, keys), ScheduleDoor(clock, visits),
            TripDoor(factory, visits, stop)]


# two at once ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Asked:
    door: Door
    way: str
    pin: str
    asked: int
    """``perf_counter_ns`` as the door was asked."""
    answer: Answer
    visit: Visit


class Pace:
    """When to ask each door of a pair so that both reach the hardware's door at the offset
    wanted: to begin with, by each way's lead (from being asked to being inside the door); then
    corrected by what the pair's own rounds showed (the gap they came out with, less the one
    wanted), since two doors at once do not keep the pace each keeps alone."""

    def __init__(self) -> None:
        self.lead: dict[str, float] = {}
        self.drift: dict[tuple[str, str], float] = {}

    def learn(self, asked: Asked) -> None:
        took = asked.visit.entered - asked.asked
        before = self.lead.get(asked.way)
        self.lead[asked.way] = took if before is None else 0.7 * before + 0.3 * took

    def learn_pair(self, done: list[Asked], skew_ns: int) -> None:
        first, second = done
        ways = (first.way, second.way)
        came = second.visit.entered - first.visit.entered
        self.drift[ways] = self.drift.get(ways, 0.0) + 0.3 * (came - skew_ns)

    def starts(self, ways: tuple[str, str], skew_ns: int) -> tuple[int, int]:
        """When to ask each, after a common start (ns), for the second to enter the door
        ``skew_ns`` after the first."""
        first, second = (self.lead.get(way, 0.0) for way in ways)
        later = int(skew_ns + first - second - self.drift.get(ways, 0.0))
        return (0, later) if later >= 0 else (-later, 0)


async def ask_at(at: int, door: Door, pin: str) -> tuple[str, int, Answer]:
    """Ask ``door`` for ``pin`` at ``at`` (``perf_counter_ns``): asleep until a moment before,
    then yielding to the loop until it comes."""
    if (early := at - time.perf_counter_ns() - 2_000_000) > 0:
        await asyncio.sleep(early / 1e9)
    while time.perf_counter_ns() < at:
        await asyncio.sleep(0)
    way = door.way
    asked = time.perf_counter_ns()
    return way, asked, await asyncio.wait_for(door.ask(pin), ANSWER_SECONDS)


async def race(asks: tuple[tuple[Door, str], ...], pace: Pace, skew_us: int,
               visits: DoorVisits) -> list[Asked]:
    """Both doors asked, timed to enter the hardware's door ``skew_us`` apart; their answers."""
    start = time.perf_counter_ns() + 1_000_000
    first, second = (door.way for door, _ in asks)
    offsets = pace.starts((first, second), skew_us * 1000)
    answers = await asyncio.gather(*(ask_at(start + offset, door, pin)
                                     for (door, pin), offset in zip(asks, offsets, strict=True)))
    done = []
    for (door, pin), (way, asked, answer) in zip(asks, answers, strict=True):
        visit = await visits.finished(door.caller, pin, start)
        done.append(Asked(door, way, pin, asked, answer, visit))
        pace.learn(done[-1])
    pace.learn_pair(done, skew_us * 1000)
    return done
