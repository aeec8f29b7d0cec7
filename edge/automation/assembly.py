"""Automation as one object for the runtime: the sensors, the rules, the schedules and the
heartbeat, built and checked from config when the agent (or a one-shot command, or ``edge-cli
config check``) starts, and run by the daemon.

Everything that could never work as written is a ConfigError (exit 2) naming the section before
any board is opened: an unknown sensor or pin, an action the policy forbids, a notice to a
channel that is not configured. What depends on the moment (a rate limit, a board down, an
approval) is decided when it happens, and refused actions are logged and told to the admins.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from edge.automation.actions import ActionRunner, PromptRunner, Surroundings
from edge.automation.engine import RuleEngine, build_rules
from edge.automation.heartbeat import Heartbeat, Probe
from edge.automation.notify import ChannelNotifier
from edge.config.model import Config
from edge.exc import ConfigError
from edge.hardware import Hardware
from edge.security.policy import Action
from edge.sensors import AnalogPinMeasure, DriverMeasure, Measure, SensorHub, SensorState
from peripherals.base import PinMode
from peripherals.exc import BoardError
from peripherals.sensors.base import Scaling
from peripherals.sensors.factory import create_sensor

log = logging.getLogger(__name__)


def build_sensor_hub(config: Config, hardware: Hardware, *, pin_factory: Any = None,
                     root: str | Path = "/") -> SensorHub:
    """A hub over every ``[sensors.NAME]``. Drivers are built, not opened: a sensor that is
    missing shows as failing in status, and reads once it is there. An analog sensor's pin
    must be an allowlisted analog pin (a ConfigError naming the key otherwise)."""
    states = []
    for name, section in config.sensors.items():
        source: Measure
        if section.type == "analog":
            try:
                board, pin = hardware.locate(section.pin)
            except BoardError as exc:
                raise ConfigError(f"sensors.{name}.pin: {exc}") from None
            refusal = hardware.policy.refusal(board, pin, Action.READ)
            if refusal is None and hardware.pins[(board, pin)].mode is not PinMode.ANALOG:
                refusal = f"{board}:{pin} is not an analog pin; allowlist it with mode = \"analog\""
            if refusal:
                raise ConfigError(f"sensors.{name}.pin: {refusal}")
            scaling = Scaling(section.scale, section.offset, section.quantity, section.unit)
            source = AnalogPinMeasure(name, hardware, f"{board}:{pin}", scaling)
        else:
            try:
                driver = create_sensor(name, section.type, section.driver_options(),
                                       pin_factory=pin_factory, root=root)
            except ValueError as exc:
                raise ConfigError(f"sensors.{name}: {exc}") from None
            source = DriverMeasure(driver)
        states.append(SensorState(name, section.type, source, section.interval_seconds))
    return SensorHub(states)


class Automation:
    """Sensors, rules and heartbeat (and schedules) for one agent process. Built (and so
    checked) at construction; :meth:`start` runs them in a resident agent."""

    def __init__(self, config: Config, hardware: Hardware, *, pin_factory: Any = None,
                 sensor_root: str | Path = "/"):
        self.config = config
        self.hardware = hardware
        self.sensors = build_sensor_hub(config, hardware, pin_factory=pin_factory,
                                        root=sensor_root)
        channels = frozenset(name for name, section in (
            ("cli", config.channels.cli), ("telegram", config.channels.telegram),
            ("signal", config.channels.signal)) if section.enabled)
        self.surroundings = Surroundings(
            hardware, {n: tuple(units) for n, units in self.sensors.describe().items()},
            channels, config.provider.configured)
        self.notifier = ChannelNotifier({}, {})
        """Channels and admins are filled in by :meth:`start`, once the channels exist."""
        self.runner = ActionRunner(hardware, self.notifier, sensors=self.sensors)
        self.rules = RuleEngine(build_rules(config.rules, self.surroundings), self.runner,
                                self.notifier)
        self.heartbeat: Heartbeat | None = None
        self._tasks: list[asyncio.Task] = []
        self._unsubscribe: list[Any] = []

    async def start(self, channels: Mapping[str, Any], admins: Mapping[str, frozenset[str]],
                    probe: Probe, prompts: PromptRunner | None = None) -> None:
        """Run: poll the sensors, feed the rules, start the heartbeat. ``probe`` says what is
        down besides the sensors (boards, channels)."""
        self.notifier.channels, self.notifier.admins = channels, admins
        self.runner.prompts = prompts
        self._unsubscribe.append(self.hardware.subscribe(self.rules.on_event))
        self._unsubscribe.append(self.sensors.subscribe(self.rules.on_reading))
        self.sensors.start()
        beat = self.config.heartbeat
        if beat.enabled:
            self.heartbeat = Heartbeat(lambda: {**probe(), **self.sensors.down()}, self.notifier,
                                       down_after=beat.down_after_seconds,
                                       interval=beat.interval_seconds, targets=beat.notify)
            self._tasks.append(asyncio.create_task(self.heartbeat.run(), name="heartbeat"))
        log.info("automation_started sensors=%d rules=%d", len(self.sensors.sensors),
                 len(self.rules.rules))

    async def aclose(self) -> None:
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self.rules.aclose()
        await self.runner.aclose()
        await self.sensors.aclose()

    def status(self) -> dict[str, Any]:
        return {"sensors": self.sensors.rows(), "rules": self.rules.rows(),
                "down": self.heartbeat.down() if self.heartbeat else {}}
