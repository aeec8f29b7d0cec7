"""Rules at work: board events and sensor readings in, actions out, each as caller ``rule:NAME``
through the same policy as a chat command.

The event path is short on purpose (a dict lookup, the rule's state, a task): an input edge on a
pin switches a relay within a few milliseconds of our own time (``bench/bench_automation.py``).
A refused action is logged every time and notified to the admins once, until the rule acts
successfully again.

In the agent, events and readings are queued (:meth:`RuleEngine.queue_event`,
:meth:`RuleEngine.queue_reading`) and handed to the rules by :meth:`RuleEngine.run`, a supervised
task: a bug in a rule's handling ends it with its traceback in the log, status shows the rules
down, and they start again after a backoff with what came meanwhile.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from edge.automation.actions import (
    ActionRunner,
    AutomationAction,
    Notifier,
    Surroundings,
    check_action,
    parse_action,
)
from edge.automation.rules import BoardTrigger, PinTrigger, RuleState, ThresholdTrigger, Trigger, parse_when
from edge.config.loader import invalid_config
from edge.config.rules import RuleConfig
from edge.core.exc import EdgeError, PolicyDenied
from edge.core.requester import Requester
from edge.core.validation import Problem
from peripherals.base import BoardEvent
from peripherals.exc import BoardError
from peripherals.sensors.base import Reading

log = logging.getLogger(__name__)

QUEUE_SIZE = 1000
"""Events and readings waiting for the rules, at most (while they restart after a failure);
more are dropped, with a warning."""


@dataclass
class Rule:
    name: str
    when: str
    trigger: Trigger
    then: tuple[AutomationAction, ...]
    on_clear: tuple[AutomationAction, ...]
    state: RuleState
    enabled: bool = True
    last_result: str | None = None
    last_error: str | None = None
    refusal_notified: bool = False
    pending: asyncio.TimerHandle | None = field(default=None, repr=False)

    @property
    def requester(self) -> Requester:
        return Requester("rule", self.name)


def build_rules(configs: Sequence[RuleConfig], where: Surroundings,
                problems: list[Problem] | None = None) -> list[Rule]:
    """Rules from config, every trigger and action checked. Each problem goes to ``problems``
    at its key (``rules.0.when``) and its rule is left out; without a list, a ConfigError names
    every problem at once."""
    found: list[Problem] = [] if problems is None else problems
    rules, seen, start = [], set(), len(found)
    for index, cfg in enumerate(configs):
        def bad(key: str, message: object, index: int = index, name: str = cfg.name) -> None:
            found.append(Problem(("rules", index, key), "value", f"rule {name!r}: {message}"))
        before = len(found)
        if cfg.name in seen:
            bad("name", f"another rule is already called {cfg.name!r}; give each its own name")
        seen.add(cfg.name)
        trigger: Trigger | None = None
        try:
            trigger = parse_when(cfg.when, where.hardware, where.sensors)
        except (ValueError, BoardError) as exc:
            bad("when", exc)
        actions: dict[str, list[AutomationAction]] = {"then": [], "on_clear": []}
        for key, texts in (("then", cfg.then), ("on_clear", cfg.on_clear)):
            for text in texts:
                try:
                    action = parse_action(text)
                    check_action(action, where)
                except (ValueError, BoardError) as exc:
                    bad(key, exc)
                else:
                    actions[key].append(action)
        threshold = trigger is None or isinstance(trigger, ThresholdTrigger)
        if cfg.on_clear and not threshold:
            bad("on_clear", "on_clear applies to sensor thresholds only")
        if cfg.hysteresis and not threshold:
            bad("hysteresis", "hysteresis applies to sensor thresholds only")
        if trigger is None or len(found) > before:
            continue
        rules.append(Rule(cfg.name, cfg.when, trigger, tuple(actions["then"]),
                          tuple(actions["on_clear"]),
                          RuleState(hysteresis=cfg.hysteresis, for_seconds=cfg.for_seconds,
                                    cooldown_seconds=cfg.cooldown_seconds), cfg.enabled))
    if problems is None and len(found) > start:
        raise invalid_config(found, "rules")
    return rules


class RuleEngine:
    def __init__(self, rules: Sequence[Rule], runner: ActionRunner, notifier: Notifier, *,
                 clock: Callable[[], float] = time.monotonic):
        self.rules = list(rules)
        self.runner, self.notifier, self.clock = runner, notifier, clock
        self._by_pin: dict[tuple[str, str], list[Rule]] = {}
        self._by_board: dict[str, list[Rule]] = {}
        self._by_reading: dict[tuple[str, str], list[Rule]] = {}
        for rule in self.rules:
            if not rule.enabled:
                continue
            trigger = rule.trigger
            if isinstance(trigger, PinTrigger):
                self._by_pin.setdefault((trigger.board, trigger.pin), []).append(rule)
            elif isinstance(trigger, BoardTrigger):
                self._by_board.setdefault(trigger.board, []).append(rule)
            else:
                self._by_reading.setdefault((trigger.sensor, trigger.quantity), []).append(rule)
        self._levels: dict[tuple[str, str], float] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._queue: asyncio.Queue[BoardEvent | tuple[str, Reading]] = asyncio.Queue(QUEUE_SIZE)
        self._dropped = 0

    # what comes in (the agent's way: queued, and handed over by run) ------------------------

    def queue_event(self, event: BoardEvent) -> None:
        """A board event for :meth:`run` (a :meth:`Hardware.subscribe` listener)."""
        self._enqueue(event)

    def queue_reading(self, sensor: str, reading: Reading) -> None:
        """A sensor reading for :meth:`run` (a :meth:`SensorHub.subscribe` listener)."""
        self._enqueue((sensor, reading))

    def _enqueue(self, item: BoardEvent | tuple[str, Reading]) -> None:
        try:
            self._queue.put_nowait(item)
        except asyncio.QueueFull:
            if not self._dropped:
                log.warning("rules_queue_full size=%d (events are dropped until the rules "
                            "catch up)", QUEUE_SIZE)
            self._dropped += 1
            return
        if self._dropped:
            log.warning("rules_events_dropped count=%d", self._dropped)
            self._dropped = 0

    async def run(self) -> None:
        """Hand what was queued to the rules, in order, until cancelled."""
        while True:
            item = await self._queue.get()
            if isinstance(item, BoardEvent):
                self.on_event(item)
            else:
                self.on_reading(*item)

    # what happens ---------------------------------------------------------------------------

    def on_event(self, event: BoardEvent) -> None:
        """A board event, handled now (by :meth:`run`; tests and the bench call it directly)."""
        if event.kind == "input" and event.pin is not None:
            key = (event.board, event.pin)
            self._levels[key] = event.value or 0.0
            for rule in self._by_pin.get(key, ()):
                self._pin_event(rule, event)
        for rule in self._by_board.get(event.board, ()):
            if rule.trigger.matches(event):  # type: ignore[union-attr]
                self._fire(rule, rule.then, {"event": f"board {event.board} {event.kind}",
                                             "board": event.board})

    def _pin_event(self, rule: Rule, event: BoardEvent) -> None:
        trigger = rule.trigger
        assert isinstance(trigger, PinTrigger)
        if rule.pending is not None:  # the level waited for did not hold
            rule.pending.cancel()
            rule.pending = None
        if not trigger.matches(event):
            return
        context = {"event": f"{rule.when}", "board": event.board, "pin": event.pin,
                   "value": event.value}
        if rule.state.for_seconds:
            rule.pending = asyncio.get_running_loop().call_later(
                rule.state.for_seconds, self._held, rule, context)
        else:
            self._fire(rule, rule.then, context)

    def _held(self, rule: Rule, context: dict[str, Any]) -> None:
        rule.pending = None
        trigger = rule.trigger
        assert isinstance(trigger, PinTrigger)
        level = self._levels.get((trigger.board, trigger.pin))
        if level is not None and trigger.holds(level):
            self._fire(rule, rule.then, context)

    def on_reading(self, sensor: str, reading: Reading) -> None:
        """A sensor reading, handled now (by :meth:`run`; tests call it directly)."""
        for rule in self._by_reading.get((sensor, reading.quantity), ()):
            trigger = rule.trigger
            assert isinstance(trigger, ThresholdTrigger)
            verdict = rule.state.on_reading(trigger, reading.value, self.clock())
            if verdict is None:
                continue
            context = {"event": f"{rule.when} ({'passed' if verdict == 'fire' else 'cleared'})",
                       "sensor": sensor, "quantity": reading.quantity,
                       "value": f"{reading.value:g}", "unit": reading.unit}
            actions = rule.then if verdict == "fire" else rule.on_clear
            if actions:
                self._start(rule, actions, context)

    # acting ---------------------------------------------------------------------------------

    def _fire(self, rule: Rule, actions: tuple[AutomationAction, ...],
              context: Mapping[str, Any]) -> None:
        if not rule.state.fire(self.clock()):
            log.debug("rule_suppressed name=%s reason=cooldown", rule.name)
            return
        self._start(rule, actions, context)

    def _start(self, rule: Rule, actions: tuple[AutomationAction, ...],
               context: Mapping[str, Any]) -> None:
        log.info("rule_fired name=%s event=%r", rule.name, context.get("event"))
        task = asyncio.create_task(self._run(rule, actions, {"rule": rule.name, **context}),
                                   name=f"rule-{rule.name}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _run(self, rule: Rule, actions: tuple[AutomationAction, ...],
                   context: Mapping[str, Any]) -> None:
        for action in actions:
            try:
                rule.last_result = await self.runner.run(action, rule.requester, context)
                rule.last_error = None
                rule.refusal_notified = False
            except PolicyDenied as exc:  # the policy logged it; the admins hear of it once
                rule.last_error = f"refused: {exc}"
                if not rule.refusal_notified:
                    rule.refusal_notified = True
                    await self.notifier.notify(
                        ("admins",), f"Rule {rule.name}: {action} was refused: {exc}")
                return
            except (EdgeError, BoardError) as exc:
                rule.last_error = str(exc)
                log.error("rule_action_failed name=%s action=%r error=%r", rule.name,
                          str(action), str(exc))
                return
            except Exception as exc:  # a bug: its traceback, and the rule stays armed
                rule.last_error = f"{type(exc).__name__}: {exc}"
                log.exception("rule_action_crashed name=%s action=%r", rule.name, str(action))
                return

    async def aclose(self) -> None:
        for rule in self.rules:
            if rule.pending is not None:
                rule.pending.cancel()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def rows(self) -> list[dict[str, Any]]:
        """Each rule for status, ``edge-cli rules`` and ``/rules``."""
        now = self.clock()
        return [{"name": r.name, "when": r.when, "then": [str(a) for a in r.then],
                 "on_clear": [str(a) for a in r.on_clear], "enabled": r.enabled,
                 "active": r.state.active, "fired": r.state.fired,
                 "suppressed": r.state.suppressed,
                 "last_fired_ago": None if r.state.last_fired is None
                 else round(now - r.state.last_fired, 1),
                 "last_result": r.last_result, "last_error": r.last_error}
                for r in self.rules]
