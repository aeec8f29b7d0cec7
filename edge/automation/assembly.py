"""Automation as one object for the runtime: the sensors, the rules, the schedules and the
heartbeat, built and checked from config when the agent (or a one-shot command, or ``edge-cli
config check``) starts, and run by the daemon.

Everything that could never work as written is a ConfigError (exit 2) naming the section before
any board is opened: an unknown sensor or pin, an action the policy forbids, a notice to a
channel that is not configured. What depends on the moment (a rate limit, a board down, an
approval) is decided when it happens, and refused actions are logged and told to the admins.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from edge.automation import wiring
from edge.automation.actions import (
    ActionRunner,
    AutomationAction,
    PromptRunner,
    Surroundings,
    check_action,
    parse_action,
    servo_refusal,
)
from edge.automation.clock import Clock, SystemClock, sleeper
from edge.automation.engine import RuleEngine, build_rules
from edge.automation.heartbeat import Heartbeat, Probe
from edge.automation.interlocks import Interlocks
from edge.automation.notify import ChannelNotifier
from edge.automation.schedule import Schedule
from edge.automation.schedule_store import ScheduleStore
from edge.automation.scheduler import Scheduler
from edge.channels.registry import enabled_channels
from edge.config.loader import invalid_config
from edge.config.model import Config
from edge.config.schedules import ScheduleConfig
from edge.config.sensors import AnalogSensorConfig
from edge.core.exc import PolicyDenied, UsageError
from edge.core.requester import Requester
from edge.core.supervision import SupervisedTask, close_all
from edge.core.validation import Problem
from edge.hardware import Hardware
from edge.security.policy import Action
from edge.sensors import AnalogPinMeasure, DriverMeasure, Measure, SensorHub, SensorState, SimulatedMeasure
from peripherals.base import PinMode
from peripherals.exc import BoardError
from peripherals.factory import BOARDS
from peripherals.sensors.factory import create_sensor

log = logging.getLogger(__name__)

MAX_RUNTIME_SCHEDULES = 100
"""Jobs added from chat, the model or edge-cli, at most: the store stays small and the list
readable; more belong in the config file."""


def build_sensor_hub(config: Config, hardware: Hardware, *, pin_factory: Any = None,
                     root: str | Path = "/", problems: list[Problem] | None = None) -> SensorHub:
    """A hub over every ``[sensors.NAME]``. Drivers are built, not opened: a sensor that is
    missing shows as failing in status, and reads once it is there. An analog sensor's pin
    must be an allowlisted analog pin. Each problem goes to ``problems`` at its key
    (``sensors.NAME.pin``) and its sensor is left out; without a list, a ConfigError names every
    problem at once."""
    found: list[Problem] = [] if problems is None else problems
    start = len(found)
    states = []
    for name, section in config.sensors.items():
        source: Measure
        if section.simulate:
            source = SimulatedMeasure(section.units)
        elif isinstance(section, AnalogSensorConfig):
            refusal = _analog_refusal(hardware, section.pin)
            if refusal:
                found.append(Problem(("sensors", name, "pin"), "value", refusal))
                continue
            board, pin = hardware.locate(section.pin)
            source = AnalogPinMeasure(name, hardware, f"{board}:{pin}", section.scaling)
        else:
            try:
                driver = create_sensor(name, section.type, section, pin_factory=pin_factory,
                                       root=root)
            except ValueError as exc:
                found.append(Problem(("sensors", name), "value", str(exc)))
                continue
            source = DriverMeasure(driver)
        states.append(SensorState(name, section.type, source, section.interval_seconds))
    if problems is None and len(found) > start:
        raise invalid_config(found, config.origin)
    return SensorHub(states)


def _analog_refusal(hardware: Hardware, spec: str) -> str | None:
    """Why an analog sensor cannot read pin ``spec``, or None."""
    try:
        board, pin = hardware.locate(spec)
    except BoardError as exc:
        return str(exc)
    refusal = hardware.refusal(board, pin, Action.READ)
    if refusal is None and hardware.pins[(board, pin)].mode is not PinMode.ANALOG:
        refusal = f"{board}:{pin} is not an analog pin; allowlist it with mode = \"analog\""
    return refusal


def servo_pins(config: Config, hardware: Hardware) -> dict[str, frozenset[str]]:
    """Each board's servo pins, as its type's spec declares them; on a board whose servos must
    be declared (the Pi header), only the pins its ``servos`` names."""
    found = {}
    for name, section in config.boards.items():
        spec = BOARDS.get(section.type)
        pins = spec.servo_pins
        if spec.servos_declared and name in hardware.boards:
            pins = pins & {_resolved(hardware, name, key) for key in section.servos}
        found[name] = pins
    return found


def servos_declared(config: Config) -> frozenset[str]:
    """The boards on which a servo runs only on a pin their section declares (the Pi header)."""
    return frozenset(name for name, section in config.boards.items()
                     if BOARDS.get(section.type).servos_declared)


def _resolved(hardware: Hardware, board: str, spec: str) -> str:
    try:
        return hardware.boards[board].resolve(spec)
    except BoardError:
        return spec


def mode_refusal(hardware: Hardware, spec: str, mode: PinMode, purpose: str) -> str | None:
    """Why ``spec`` is not an allowlisted pin of ``mode`` (``purpose`` says what needs one),
    or None when it is; a name no board has is a BoardError that names it."""
    board, pin = hardware.locate(spec)
    rule = hardware.pins.get((board, pin))
    if rule is None:
        return (f"{board}:{pin} is not in the allowlist; add it under [boards.{board}.pins] "
                f"with mode = \"{mode.value}\"")
    if rule.mode is not mode:
        return f"{rule.label} is configured as {rule.mode.value}; {purpose} needs mode = \"{mode.value}\""
    return None


def servo_problems(config: Config, hardware: Hardware) -> list[Problem]:
    """``[mqtt] servos`` against the pins: each name must be an allowlisted pwm pin on which its
    board can drive a servo (else Home Assistant would show a slider whose every command is
    refused)."""
    found = declared_servo_problems(config, hardware)
    pins = servo_pins(config, hardware)
    for index, spec in enumerate(config.mqtt.servos):
        try:
            refusal = (mode_refusal(hardware, spec, PinMode.PWM, "a servo")
                       or servo_refusal(*hardware.locate(spec), pins, servos_declared(config)))
        except BoardError as exc:
            found.append(Problem(("mqtt", "servos", index), "value", str(exc)))
            continue
        if refusal:
            found.append(Problem(("mqtt", "servos", index), "value", f"{spec!r}: {refusal}"))
    return found


def declared_servo_problems(config: Config, hardware: Hardware) -> list[Problem]:
    """``[boards.NAME.servos]``: each an allowlisted pwm pin of its board where the board can
    drive a servo."""
    found = []
    for name, section in config.boards.items():
        can = BOARDS.get(section.type).servo_pins
        for key in section.servos:
            where = ("boards", name, "servos", key)
            try:
                pin = hardware.boards[name].resolve(key) if name in hardware.boards else key
                refusal = mode_refusal(hardware, f"{name}:{pin}", PinMode.PWM, "a servo")
            except BoardError as exc:
                found.append(Problem(where, "value", str(exc)))
                continue
            if refusal is None and pin not in can:
                refusal = servo_refusal(name, pin, {name: can})
            if refusal:
                found.append(Problem(where, "value", refusal))
    return found


def node_problems(config: Config) -> list[Problem]:
    """A ``node`` board (another agent's pins) is reached through the broker: it needs
    ``[mqtt] url``."""
    if config.mqtt.enabled:
        return []
    return [Problem(("boards", name, "type"), "value",
                    "a node board reaches its agent through the broker; set [mqtt] url (the "
                    "broker both agents use)")
            for name, board in config.boards.items()
            if board.type == "node" and not getattr(board, "simulate", False)]


def input_problems(config: Config, hardware: Hardware) -> list[Problem]:
    """``[mqtt.inputs]`` against the pins: each name must be an allowlisted input pin (it says
    how Home Assistant shows one)."""
    found = []
    for name in config.mqtt.inputs:
        try:
            refusal = mode_refusal(hardware, name, PinMode.INPUT, "[mqtt.inputs]")
        except BoardError as exc:
            refusal = str(exc)
        if refusal:
            found.append(Problem(("mqtt", "inputs", name), "value", refusal))
    return found

class Automation:
    """Sensors, rules, schedules and the heartbeat for one agent process. Built (and so checked)
    at construction; :meth:`start` runs them in a resident agent. ``state_dir`` holds the
    schedules' store (last runs, jobs added at runtime); without one there is no scheduler
    (``edge-cli config check``). ``clock``: the wall and monotonic time schedules and rules
    run on (tests give a :class:`~edge.automation.clock.ManualClock`)."""

    def __init__(self, config: Config, hardware: Hardware, *, pin_factory: Any = None,
                 sensor_root: str | Path = "/", state_dir: Path | None = None,
                 clock: Clock | None = None):
        self.config = config
        self.hardware = hardware
        problems: list[Problem] = []
        """Every problem at once, each at its key, checked against what is known before
        anything runs (ConfigError, exit 2)."""
        self.sensors = build_sensor_hub(config, hardware, pin_factory=pin_factory,
                                        root=sensor_root, problems=problems)
        self.interlocks = Interlocks(config.interlocks, hardware, self.sensors, problems=problems)
        hardware.set_guard(self.interlocks)
        channels = frozenset(enabled_channels(config))
        self.surroundings = Surroundings(
            hardware, {n: tuple(units) for n, units in self.sensors.describe().items()},
            channels, config.provider.configured, servo_pins(config, hardware),
            servos_declared(config))
        self.notifier = ChannelNotifier({}, {})
        """Channels and admins are filled in by :meth:`start`, once the channels exist."""
        clock = clock or SystemClock()
        self.runner = ActionRunner(hardware, self.notifier, sensors=self.sensors,
                                   sleep=sleeper(clock))
        self.rules = RuleEngine(build_rules(config.rules, self.surroundings, problems),
                                self.runner, self.notifier, clock=clock.monotonic)
        for index, job in enumerate(config.schedules):
            try:
                self.check_schedule(job)
            except ValueError as exc:
                problems.append(Problem(("schedules", index, "action"), "value",
                                        f"schedule {job.name!r}: {exc}"))
        problems.extend(servo_problems(config, hardware))
        problems.extend(input_problems(config, hardware))
        problems.extend(node_problems(config))
        if problems:
            raise invalid_config(problems, config.origin)
        self.scheduler = None if state_dir is None else Scheduler(
            config.schedules, ScheduleStore.in_state_dir(state_dir), self._run_job, clock)
        self._refusals_told: set[str] = set()
        self.heartbeat: Heartbeat | None = None
        self._tasks: list[SupervisedTask] = []
        self._unsubscribe: list[Any] = []
        self._listening = False

    async def start(self, channels: Mapping[str, Any], admins: Mapping[str, frozenset[str]],
                    probe: Probe, prompts: PromptRunner | None = None, *,
                    hold_rules: bool = False) -> None:
        """Run: poll the sensors, feed the rules, start the scheduler and the heartbeat, each a
        supervised task (:meth:`supervised_tasks`). ``probe`` says what is down besides the
        sensors (boards, channels, tasks). ``hold_rules`` (safe mode) leaves the rules and the
        scheduler stopped until :meth:`start_rules`."""
        self.notifier.channels, self.notifier.admins = channels, admins
        self.runner.prompts = prompts
        if self.interlocks.interlocks:  # safety: they run in safe mode too
            self.interlocks.notifier = self.notifier
            self._unsubscribe.append(self.hardware.subscribe(self.interlocks.poke))
            self._unsubscribe.append(self.sensors.subscribe(self.interlocks.poke))
            self._tasks.append(SupervisedTask("interlocks", self.interlocks.run).start())
        if not hold_rules:
            self.start_rules()
        self.sensors.start()
        beat = self.config.heartbeat
        if beat.enabled:
            self.heartbeat = Heartbeat(lambda: {**probe(), **self.sensors.down()}, self.notifier,
                                       down_after=beat.down_after_seconds,
                                       interval=beat.interval_seconds, targets=beat.notify)
            self._tasks.append(SupervisedTask("heartbeat", self.heartbeat.run).start())
        for change in self.meaning_changes():
            log.warning("input_meaning_changed %s", change)
        log.info("automation_started sensors=%d rules=%d schedules=%d", len(self.sensors.sensors),
                 len(self.rules.rules), len(self.scheduler.rows()) if self.scheduler else 0)

    def wiring_notes(self) -> list[str]:
        """Each interlock and rule on an input, in wiring terms (:mod:`edge.automation.wiring`)."""
        return wiring.notes(self.interlocks, self.rules.rules)

    def meaning_changes(self) -> list[str]:
        """The interlocks and rules on a pulled-up input whose ``on`` meant a high line before."""
        return wiring.changes(self.config, self.interlocks, self.rules.rules)

    def listen(self) -> None:
        """Queue pin events and readings for the rules from now on (once): a resident agent
        calls it as soon as the boards are up, so an input edge while the rest of the agent
        starts (its channels, memory, the model) is acted on once the rules run, not lost."""
        if self._listening:
            return
        self._listening = True
        self._unsubscribe.append(self.hardware.subscribe(self.rules.queue_event))
        self._unsubscribe.append(self.sensors.subscribe(self.rules.queue_reading))

    def start_rules(self) -> None:
        """The rules (fed by pin events and readings) and the scheduler; once."""
        if any(task.name in ("rules", "scheduler") for task in self._tasks):
            return
        self.listen()
        self._tasks.append(SupervisedTask("rules", self.rules.run).start())
        if self.scheduler is not None:
            self._tasks.append(SupervisedTask("scheduler", self.scheduler.run).start())

    async def aclose(self) -> None:
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        await close_all(self._tasks)
        await self.rules.aclose()
        await self.runner.aclose()
        await self.sensors.aclose()

    def supervised_tasks(self) -> list[SupervisedTask]:
        """The interlocks' watch, the rules, the scheduler, the heartbeat and each sensor's
        polling, once started."""
        return [*self._tasks, *self.sensors.supervised_tasks()]

    def status(self) -> dict[str, Any]:
        return {"sensors": self.sensors.rows(), "rules": self.rules.rows(),
                "interlocks": self.interlocks.rows(),
                "schedules": self.schedule_rows(),
                "down": self.heartbeat.down() if self.heartbeat else {}}

    # schedules ----------------------------------------------------------------------------------

    def check_schedule(self, job: ScheduleConfig) -> AutomationAction:
        """The job's action, parsed and checked; ValueError saying why it could never run."""
        try:
            action = parse_action(job.action)
            check_action(action, self.surroundings)
        except BoardError as exc:
            raise ValueError(str(exc)) from None
        return action

    def schedule_rows(self) -> list[dict[str, Any]]:
        return [row.as_json() for row in self.scheduler.rows()] if self.scheduler else []

    def add_schedule(self, job: ScheduleConfig, added_by: str) -> Schedule:
        """A job added at runtime (chat, the model, edge-cli); UsageError when it cannot be."""
        if self.scheduler is None:
            raise UsageError("schedules need the agent's state directory")
        try:
            self.check_schedule(job)
        except ValueError as exc:
            raise UsageError(f"schedule {job.name!r}: {exc}") from None
        if len(self.scheduler.store.runtime_jobs()) >= MAX_RUNTIME_SCHEDULES:
            raise UsageError(f"there are already {MAX_RUNTIME_SCHEDULES} schedules added at "
                             "runtime; remove some (/schedule remove NAME) or put the job in the "
                             "config file's [[schedules]]")
        return self.scheduler.add(job, added_by)

    def remove_schedule(self, name: str, by: str) -> None:
        if self.scheduler is None:
            raise UsageError("schedules need the agent's state directory")
        self.scheduler.remove(name, by)

    async def _run_job(self, job: Schedule, occurrence: datetime) -> str | None:
        """One occurrence of a job, as caller ``schedule:NAME``; a refusal is raised (the
        scheduler records it) and told to the admins once, until the job succeeds again."""
        action = parse_action(job.config.action)
        requester = Requester("schedule", job.name)
        due = occurrence.astimezone(job.config.zone()).strftime("%Y-%m-%d %H:%M")
        try:  # {time}: when the job was due, not the clock as it fires (06:00, never 05:59)
            result = await self.runner.run(action, requester, {"schedule": job.name, "time": due})
        except PolicyDenied as exc:
            if job.name not in self._refusals_told:
                self._refusals_told.add(job.name)
                await self.notifier.notify(("admins",), f"Schedule {job.name}: {action} was "
                                           f"refused: {exc}")
            raise
        self._refusals_told.discard(job.name)
        return result
