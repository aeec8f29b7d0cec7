"""Running a scenario: the agent started in its world (:mod:`edge.scenario.world`), each step
done or checked in order, the first that fails reported as a person wants it (which step, what
was expected, what was found, the last events), the rest not run.

An expectation is about what happened since the last action began (its window), and waits a
little (:data:`SETTLE_SECONDS`, real time) for what the action set going (a rule's write, an
audit record) before it fails: the clock only moves when a step moves it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import tempfile
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from edge.audit import read_history
from edge.config.loader import LoadedConfig
from edge.control.ops import mcp_requester, run_op
from edge.core.actuation import Actuation
from edge.core.exc import EdgeError, UsageError
from edge.core.requester import Requester
from edge.scenario import steps as s
from edge.scenario.world import ScenarioChannel, ScenarioClock, ScenarioRuntime, scenario_config
from edge.sensors import SimulatedMeasure
from peripherals.exc import BoardError

SETTLE_SECONDS = 2.0
"""How long (real time) an expectation waits for what an action set going before it fails."""
EVENTS_SHOWN = 8
ARRIVED = 0.001
"""How far past an ``until`` time the clock goes (a millisecond)."""
MAX_CHUNKS = 400
"""A wait moves the clock in at most this many steps (a week with a 30 s sensor: 25 min each)."""
OPERATOR = Requester("cli", "scenario")
EXPECTER = Requester("scenario", "expect")


class StepFailed(EdgeError):
    """A scenario's step did not find what it expected (the runner reports it; exit 1)."""

    def __init__(self, expected: str, got: str):
        super().__init__(f"expected {expected}, got {got}")
        self.expected, self.got = expected, got


@dataclass
class StepResult:
    index: int
    title: str
    status: str
    """``ok``, ``failed`` or ``not run``."""
    at: str = ""
    """The scenario's wall time after the step, in its zone."""
    expected: str = ""
    got: str = ""
    events: list[str] = field(default_factory=list)
    seconds: float = 0.0


class EventTail(logging.Handler):
    """The agent's last log events (``actuation board=gpio pin=GPIO22 ...``), for a failure."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines: deque[str] = deque(maxlen=EVENTS_SHOWN)

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


class ScenarioRun:
    """The agent of ``loaded`` (simulated), running for ``scenario``; ``async with`` it."""

    def __init__(self, scenario: s.Scenario, loaded: LoadedConfig):
        self.scenario = scenario
        self.clock = ScenarioClock(scenario.start)
        self._loaded = loaded
        self.outcomes: list[Actuation] = []
        self.window: tuple[int, float, dict[str, int]] = (0, time.time(), {})
        """Where the last action began: outcomes seen, the real time, messages sent."""
        self.tail = EventTail()
        self.runtime: ScenarioRuntime

    async def record(self, actuation: Actuation) -> None:
        """Every outcome at the door to the pins, kept for the expectations and the events."""
        self.outcomes.append(actuation)
        self.tail.lines.append(f"door action={actuation.action} pin={actuation.label} "
                               f"outcome={actuation.outcome} by={actuation.caller}"
                               + (f" reason={actuation.reason!r}" if actuation.reason else ""))

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[ScenarioRun]:
        logger = logging.getLogger("edge")
        level = logger.level
        with tempfile.TemporaryDirectory(prefix="edge-scenario-") as state, \
                open(os.devnull) as stdin:
            people = {who.partition(":")[0] for who in self.scenario.people.values()}
            self.runtime = ScenarioRuntime(scenario_config(self._loaded, Path(state)), self.clock,
                                           people, stdin)
            self.runtime.hardware.add_recorder(self)
            logger.addHandler(self.tail)
            logger.setLevel(logging.INFO)
            task = asyncio.create_task(self.runtime.run(), name="scenario-agent")
            try:
                ready = asyncio.create_task(self.runtime.ready.wait())
                await asyncio.wait({task, ready}, return_when=asyncio.FIRST_COMPLETED)
                if task.done():
                    ready.cancel()
                    task.result()  # its ConfigError, as `edge-cli run` would say it
                yield self
            finally:
                self.runtime.request_stop("scenario done")
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(task, 15)
                logger.removeHandler(self.tail)
                logger.setLevel(level)

    # the steps -----------------------------------------------------------------------------

    async def do(self, step: s.Step) -> None:
        """One step; StepFailed when an expectation does not hold, UsageError when the step
        names what the config does not have."""
        handler: Callable[[Any], Any] = getattr(self, f"_{step.kind}")
        if not step.kind.startswith("expect"):
            self.window = (len(self.outcomes), time.time(), self._sent_counts())
        await handler(step)

    def _sent_counts(self) -> dict[str, int]:
        return {name: len(ch.sent) for name, ch in self.runtime.scenario_channels.items()}

    async def _input(self, step: s.InputStep) -> None:
        await self._operator("gpio.simulate", {"pin": step.input, "value": step.value})

    async def _sensor(self, step: s.SensorStep) -> None:
        name, quantity = step.sensor.split(".")
        args: dict[str, Any] = {"name": name, "quantity": quantity}
        args.update({"release": True} if step.value == "release" else {"value": step.value})
        await self._operator("sensors.simulate", args)

    async def _operator(self, op: str, args: dict[str, Any]) -> None:
        result = await run_op(self.runtime, op, args, OPERATOR, operator=True)
        if result.exit_code == 2:
            raise UsageError(result.message)

    async def _wait(self, step: s.WaitStep) -> None:
        await self._pass(step.seconds)

    async def wait(self, span: str) -> None:
        """Let ``span`` (``"10m"``) pass on the scenario's clock, sensors read as it does."""
        await self._pass(s.seconds_of(span))

    async def _pass(self, seconds: float) -> None:
        """Let ``seconds`` pass on the clock, in chunks no longer than the shortest simulated
        sensor's interval (at most :data:`MAX_CHUNKS` of them), each simulated sensor read at
        the end of each, as its polling would (a rule's ``for_seconds`` sees time pass); the
        agent is let finish what it was doing (a record on its way) before time moves."""
        hub = self.runtime.automation.sensors
        polled = [state for state in hub.sensors.values()
                  if isinstance(state.source, SimulatedMeasure) and state.source.held]
        interval = min((state.interval for state in polled), default=seconds)
        chunk = max(interval, math.ceil(seconds / MAX_CHUNKS))
        end = self.clock.now() + timedelta(seconds=seconds)
        while self.clock.now() < end:
            await self._quiet()
            await self.clock.advance(min(timedelta(seconds=chunk), end - self.clock.now()))
            for state in polled:
                await hub.measure(state.name)
        await self._quiet()

    async def _quiet(self) -> None:
        """Until no audit record is on its way (what the door does next waits for it), then
        the loop settled: a hold started by that switch is asleep on the clock."""
        deadline = time.monotonic() + SETTLE_SECONDS
        while self.runtime.audit.busy and time.monotonic() < deadline:
            await asyncio.sleep(0.001)
        await self.clock.settle()

    async def _until(self, step: s.UntilStep) -> None:
        try:
            when = self.scenario.next_time(self.clock.now(), step.until)
        except ValueError:
            raise UsageError(f"until {step.until!r}: write 06:00 or 2026-03-29 06:00") from None
        if when <= self.clock.now():
            raise UsageError(f"until {step.until}: that time has passed in the scenario")
        # a hair past it: what is due at 06:00 sharp is due however the seconds were added up
        await self._pass((when - self.clock.now()).total_seconds() + ARRIVED)

    async def _chat(self, step: s.ChatStep) -> None:
        channel, sender = self.person(step.sender)
        self.runtime.model.turns = list(step.model)
        seen = len(channel.sent)
        await channel.hear(sender, step.chat)
        reply = await self._settle(lambda: next(
            (text for who, text in channel.sent[seen:] if who == sender), None))
        for wanted in (step.reply, step.receipt):
            if wanted is not None and (reply is None or wanted not in reply):
                raise StepFailed(f"a reply to {step.sender} saying {wanted!r}",
                                 repr(reply) if reply is not None else "no reply")

    def person(self, name: str) -> tuple[ScenarioChannel, str]:
        address = self.scenario.people.get(name)
        if address is None:
            raise UsageError(f"no person {name!r} in [people] (name = \"telegram:123456789\")")
        channel_name, _, sender = address.partition(":")
        channel = self.runtime.scenario_channels.get(channel_name)
        if channel is None or not sender:
            raise UsageError(f"{name} = {address!r}: write CHANNEL:ID of a chat channel")
        return channel, sender

    async def _op(self, step: s.OpStep) -> None:
        """An operation as the local operator (``edge-cli``); a refusal is for an expectation."""
        await self._operator(step.op, step.args)

    async def _mqtt(self, step: s.MqttStep) -> None:
        from edge.mqtt.commands import carry_out
        from edge.mqtt.entities import Naming, kind_for, parse_command

        hardware = self.runtime.hardware
        pin = hardware.pins.get(hardware.locate(step.mqtt))
        if pin is None:
            raise UsageError(f"mqtt {step.mqtt}: not an allowlisted pin")
        naming = Naming(frozenset(self.runtime.config.mqtt.servos))
        with contextlib.suppress(EdgeError, BoardError):  # a refusal is what it is: see expect
            await carry_out(hardware, step.mqtt, parse_command(kind_for(pin, naming),
                                                               step.payload.encode()),
                            Requester("mqtt", f"edge-agent/{step.mqtt}/set"))

    async def _mcp(self, step: s.McpStep) -> None:
        from edge.ops.catalog import CATALOG

        op = next((o for o in CATALOG.values() if step.mcp in o.mcp_names), None)
        if op is None:
            raise UsageError(f"mcp {step.mcp!r} is no MCP tool of this agent")
        await run_op(self.runtime, op.name, step.args,
                     mcp_requester(f"mcp:{step.client}", "scenario"))

    # expectations --------------------------------------------------------------------------

    async def _settle(self, found: Callable[[], Any]) -> Any:
        """``found()`` once it is not None, waiting up to :data:`SETTLE_SECONDS`; None then."""
        deadline = time.monotonic() + SETTLE_SECONDS
        while (value := found()) is None and time.monotonic() < deadline:
            await asyncio.sleep(0.005)
        return value

    async def _expect_pin(self, step: s.ExpectPin) -> None:
        got: list[str] = []

        async def reads() -> float:
            _, value = await self.runtime.hardware.read(step.expect_pin, EXPECTER)
            return value

        def matches(value: float) -> bool:
            if step.is_ in ("on", "off"):
                return (value >= 0.5) == (step.is_ == "on")
            return abs(value - float(step.is_)) < 1e-6

        deadline = time.monotonic() + SETTLE_SECONDS
        while True:
            value = await reads()
            if matches(value):
                return
            got = [("on" if value >= 0.5 else "off") if step.is_ in ("on", "off") else f"{value:g}"]
            if time.monotonic() >= deadline:
                raise StepFailed(f"{step.expect_pin} {step.is_}", f"{step.expect_pin} {got[0]}")
            await asyncio.sleep(0.005)

    def _since(self) -> list[Actuation]:
        return self.outcomes[self.window[0]:]

    async def _expect_refused(self, step: s.ExpectRefused) -> None:
        def refusal() -> Actuation | None:
            return next((a for a in self._since() if a.outcome == "refused"
                         and f"interlock {step.expect_refused}" in a.reason
                         and step.door in (None, a.door)), None)

        if await self._settle(refusal) is None:
            door = f" through {step.door}" if step.door else ""
            raise StepFailed(f"a refusal by interlock {step.expect_refused}{door}",
                             self._outcomes_words())

    async def _expect_trip(self, step: s.ExpectTrip) -> None:
        def trip() -> Actuation | None:
            return next((a for a in self._since() if a.action in ("trip", "safe")
                         and a.caller == f"interlock:{step.expect_trip}"), None)

        if await self._settle(trip) is None:
            raise StepFailed(f"interlock {step.expect_trip} to trip", self._outcomes_words())

    def _outcomes_words(self) -> str:
        return "; ".join(a.receipt() + f" (by {a.caller})" for a in self._since()) or \
            "nothing at the door to the pins"

    async def _expect_notified(self, step: s.ExpectNotified) -> None:
        channel, sender = self.person(step.expect_notified)
        start = self.window[2].get(channel.name, 0)

        def message() -> str | None:
            return next((text for who, text in channel.sent[start:]
                         if who == sender and step.containing in text), None)

        if await self._settle(message) is None:
            sent = [text for who, text in channel.sent[start:] if who == sender]
            raise StepFailed(f"a message to {step.expect_notified} containing "
                             f"{step.containing!r}", repr(sent) if sent else "no message")

    async def _expect_audit(self, step: s.ExpectAudit) -> None:
        def record() -> Actuation | None:
            rows = read_history(self.runtime.audit.path, since=self.window[1] - 1, limit=500)
            return next((r for r in rows if all(
                str(value) in str(getattr(r, key, "")) if key == "reason"
                else str(getattr(r, key, "")) == str(value)
                for key, value in step.expect_audit.items())), None)

        if await self._settle(record) is None:
            rows = read_history(self.runtime.audit.path, since=self.window[1] - 1, limit=5)
            raise StepFailed(f"an audit record with {step.expect_audit}",
                             "; ".join(f"{r.label} {r.action} {r.outcome} by {r.caller}"
                                       for r in rows) or "no audit record")

    def wall_time(self) -> str:
        return self.clock.now().astimezone(self.scenario.zone).strftime("%Y-%m-%d %H:%M %Z")


async def run_scenario(scenario: s.Scenario, loaded: LoadedConfig) -> list[StepResult]:
    """Every step in order; the first failure ends the run (the rest: ``not run``)."""
    results: list[StepResult] = []
    run = ScenarioRun(scenario, loaded)
    async with run.running():
        for index, step in enumerate(scenario.steps, 1):
            began = time.monotonic()
            result = StepResult(index, step.title(index), "ok")
            try:
                await run.do(step)
            except StepFailed as failed:
                result.status, result.expected, result.got = "failed", failed.expected, failed.got
                result.events = list(run.tail.lines)
            except UsageError as exc:
                raise UsageError(f"{result.title}: {exc}") from None
            except (EdgeError, BoardError) as exc:
                result.status, result.expected, result.got = "failed", "the step to be done", str(exc)
                result.events = list(run.tail.lines)
            result.at = run.wall_time()
            result.seconds = time.monotonic() - began
            results.append(result)
            if result.status == "failed":
                break
    results += [StepResult(i, step.title(i), "not run")
                for i, step in enumerate(scenario.steps, 1) if i > len(results)]
    return results
