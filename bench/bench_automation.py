"""Automation: input edge on a mock pin -> rule -> output pin switched, p50/p99 of our own time
(gpiozero's mock pins take no time of their own; target p99 under 5 ms), next to the baseline of
the same write asked for directly through the hardware door. Then the idle cost of 10 schedules
and 20 rules over a quiet stretch: CPU share and memory (targets: under 0.5 % and 2 MB)."""

from __future__ import annotations

import asyncio
import statistics
import time

from gpiozero.pins.mock import MockFactory, MockPWMPin

from bench.process import row
from edge.automation.actions import ActionRunner, Surroundings
from edge.automation.engine import RuleEngine, build_rules
from edge.config.model import Config
from edge.config.rules import RuleConfig
from edge.hardware import build_hardware
from edge.requester import Requester
from peripherals.base import BoardEvent

EDGES = 2000
CONFIG = {"boards": {"gpio": {"aliases": {"button": "GPIO27", "led": "GPIO17"},
                              "pins": {"button": {"mode": "input"},
                                       "led": {"mode": "output", "safe": "off"},
                                       **{f"GPIO{n}": {"mode": "input"} for n in range(5, 13)}}}},
          "security": {"max_actuations_per_minute": 1_000_000}}


class Quiet:
    async def notify(self, targets, text):
        return 1


def percentile(samples: list[float], share: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))]


async def event_to_action() -> None:
    factory = MockFactory(pin_class=MockPWMPin)
    config = Config.model_validate(CONFIG)
    hw = build_hardware(config, resident=True, pin_factory=factory)
    where = Surroundings(hw, {}, frozenset(), False)
    rules = build_rules([RuleConfig(name="lamp", when="button changes", cooldown_seconds=0,
                                    then="gpio write led on")], where)
    engine = RuleEngine(rules, ActionRunner(hw, Quiet()), Quiet())
    await hw.start()
    hw.subscribe(engine.on_event)
    switched = asyncio.Event()
    at: list[float] = []

    def on_output(event: BoardEvent) -> None:
        if event.kind == "output":
            at.append(time.perf_counter())
            switched.set()

    hw.subscribe(on_output)
    button = factory.pin(27)
    samples, direct = [], []
    try:
        for i in range(EDGES):
            switched.clear()
            start = time.perf_counter()
            button.drive_low() if i % 2 == 0 else button.drive_high()
            await switched.wait()
            samples.append((at[-1] - start) * 1000)
        asker = Requester("bench", "direct")
        for _ in range(EDGES // 2):
            switched.clear()
            start = time.perf_counter()
            await hw.write("led", True, asker)
            await switched.wait()
            direct.append((at[-1] - start) * 1000)
    finally:
        await engine.aclose()
        await hw.shutdown()
    print(f"input edge -> rule -> output switched (mock pins, n={EDGES})")
    row("edge -> action p50", f"{statistics.median(samples):.3f} ms")
    row("edge -> action p99", f"{percentile(samples, 0.99):.3f} ms", "target < 5 ms")
    row("baseline: direct write p50 / p99",
        f"{statistics.median(direct):.3f} / {percentile(direct, 0.99):.3f} ms")


def main() -> None:
    asyncio.run(event_to_action())
