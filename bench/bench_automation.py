"""Automation: input edge on a mock pin -> rule -> output pin switched, p50/p99 of our own time
(gpiozero's mock pins take no time of their own; target p99 under 5 ms), next to the baseline of
the same write asked for directly through the hardware door; the cost of 20 interlocks on a write
(target p99 under 1 ms). Then the idle cost of 10 schedules
and 20 rules over a quiet stretch: CPU share and memory (targets: under 0.5 % and 2 MB)."""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

from gpiozero.pins.mock import MockFactory, MockPWMPin

from bench.process import BIN, Switches, percentile, row, rss_kib
from edge.automation.actions import ActionRunner, Surroundings
from edge.automation.engine import RuleEngine, build_rules
from edge.config.model import Config
from edge.config.rules import RuleConfig
from edge.core.requester import Requester
from edge.hardware import build_hardware

EDGES = 2000
CONFIG = {"boards": {"gpio": {"aliases": {"button": "GPIO27", "led": "GPIO17"},
                              "pins": {"button": {"mode": "input"},
                                       "led": {"mode": "output", "safe": "off"},
                                       **{f"GPIO{n}": {"mode": "input"} for n in range(5, 13)}}}},
          "security": {"max_actuations_per_minute": 1_000_000}}


class Quiet:
    async def notify(self, targets: Iterable[str], text: str) -> int:
        return 1


async def event_to_action() -> None:
    factory = MockFactory(pin_class=MockPWMPin)
    config = Config.model_validate(CONFIG)
    hw = build_hardware(config, resident=True, pin_factory=factory)
    where = Surroundings(hw, {}, frozenset(), False)
    rules = build_rules([RuleConfig(name="lamp", when="button changes", cooldown_seconds=0,
                                    then=["gpio write led on"])], where)
    engine = RuleEngine(rules, ActionRunner(hw, Quiet()), Quiet())
    await hw.start()
    hw.subscribe(engine.queue_event)  # as in the agent: queued for the rules' supervised task
    handing_over = asyncio.create_task(engine.run())
    switches = Switches(hw)
    button = factory.pin(27)
    samples, direct = [], []
    try:
        for i in range(EDGES):
            switches.arm()
            start = time.perf_counter()
            button.drive_low() if i % 2 == 0 else button.drive_high()
            samples.append((await switches.next() - start) * 1000)
        asker = Requester("bench", "direct")
        for _ in range(EDGES // 2):
            switches.arm()
            start = time.perf_counter()
            await hw.write("led", True, asker)
            direct.append((await switches.next() - start) * 1000)
    finally:
        handing_over.cancel()
        await engine.aclose()
        await hw.shutdown()
    print(f"input edge -> rule -> output switched (mock pins, n={EDGES})")
    row("edge -> action p50", f"{statistics.median(samples):.3f} ms")
    row("edge -> action p99", f"{percentile(samples, 0.99):.3f} ms", "target < 5 ms")
    row("baseline: direct write p50 / p99",
        f"{statistics.median(direct):.3f} / {percentile(direct, 0.99):.3f} ms")


INPUTS = [5, 6, 7, 8, 9, 10, 11, 12, 13, 16, 19, 20, 21, 24, 25, 26, 4, 14, 15, 18]
IDLE_SECONDS = 20.0


WRITES = 1000  # two runs inside one minute's budget of 6000 switches
GUARDED = {"boards": {"gpio": {"aliases": {"led": "GPIO17"},
                               "pins": {"led": {"mode": "output", "safe": "off",
                                                "max_switches_per_minute": 6000},
                                        **{f"GPIO{n}": {"mode": "input", "pull": "down"}
                                           for n in INPUTS[:10]},
                                        **{f"GPIO{n}": {"mode": "output", "safe": "off"}
                                           for n in INPUTS[10:]}}}},
           "security": {"max_actuations_per_minute": 1_000_000},
           "interlocks": [
               *({"name": f"in{n}", "forbid": "led on", "while": f"GPIO{n} on"}
                 for n in INPUTS[:10]),
               *({"name": f"pair{i}", "exclusive": ["led", f"GPIO{n}"]}
                 for i, n in enumerate(INPUTS[10:])),
           ]}


async def write_path(interlocks: bool) -> list[float]:
    """``led`` switched on and off through the door, ms each, with or without 20 interlocks
    (10 forbid-while on inputs, 10 exclusive pairs; none refuses)."""
    from edge.automation.assembly import Automation

    config = Config.model_validate(GUARDED if interlocks else {**GUARDED, "interlocks": []})
    factory = MockFactory(pin_class=MockPWMPin)
    hw = build_hardware(config, resident=True, pin_factory=factory)
    Automation(config, hw, pin_factory=factory)  # builds the interlocks and hands them to the door
    await hw.start()
    asker = Requester("bench", "direct")
    samples = []
    try:
        for i in range(WRITES):
            start = time.perf_counter()
            await hw.write("led", i % 2 == 0, asker)
            samples.append((time.perf_counter() - start) * 1000)
    finally:
        await hw.shutdown()
    return samples


def interlock_cost() -> None:
    bare, guarded = asyncio.run(write_path(False)), asyncio.run(write_path(True))
    print(f"a write through the door, with and without 20 interlocks (mock pins, n={WRITES})")
    row("write p50 / p99, no interlocks",
        f"{statistics.median(bare):.3f} / {percentile(bare, 0.99):.3f} ms")
    row("write p50 / p99, 20 interlocks",
        f"{statistics.median(guarded):.3f} / {percentile(guarded, 0.99):.3f} ms")
    row("20 interlocks on the write path, p99",
        f"{percentile(guarded, 0.99) - percentile(bare, 0.99):+.3f} ms", "target < 1 ms")


def automation_toml() -> str:
    """20 rules on 20 input pins and 10 schedules (cron, every), all checked and running."""
    pins = "\n".join(f'GPIO{n} = {{ mode = "input" }}' for n in INPUTS)
    rules = "\n".join(f'[[rules]]\nname = "r{n}"\nwhen = "GPIO{n} changes"\n'
                      f'then = "gpio write led on"\n' for n in INPUTS)
    jobs = "\n".join(f'[[schedules]]\nname = "s{i}"\n'
                      + (f'cron = "{i} 6 * * *"\n' if i % 2 else f'every = "{i + 1}h"\n')
                      + 'action = "gpio write led off"\n' for i in range(10))
    return (f'[boards.gpio.pins]\nled = {{ mode = "output", safe = "off" }}\n{pins}\n'
            f"{rules}\n{jobs}")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def idle_cost() -> None:
    """Two daemons side by side, the same but for the automation: CPU over a quiet stretch and
    RSS at its end."""
    cli = str(BIN / "edge-cli")
    with tempfile.TemporaryDirectory() as tmp:
        daemons = {}
        for name, text in (("baseline", '[boards.gpio.pins]\nled = { mode = "output" }\n'),
                           ("automation", automation_toml())):
            state = Path(tmp) / name
            state.mkdir()
            (state / "config.toml").write_text(text)
            env = {k: v for k, v in os.environ.items() if not k.startswith("EDGE_")}
            env.update(EDGE_STATE_DIR=str(state), EDGE_CONFIG=str(state / "config.toml"),
                       HOME=str(state), EDGE_MEMORY__EMBEDDER="none")
            proc = subprocess.Popen([cli, "run"], env=env, stdin=subprocess.DEVNULL,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            daemons[name] = (proc, state / "control.sock")
        try:
            for proc, sock in daemons.values():
                deadline = time.monotonic() + 30
                while not sock.exists():
                    if proc.poll() is not None or time.monotonic() > deadline:
                        raise RuntimeError("a daemon did not start")
                    time.sleep(0.01)
            time.sleep(2.0)
            cpu0 = {n: cpu_seconds(p.pid) for n, (p, _) in daemons.items()}
            time.sleep(IDLE_SECONDS)
            cpu = {n: (cpu_seconds(p.pid) - cpu0[n]) / IDLE_SECONDS * 100
                   for n, (p, _) in daemons.items()}
            rss = {n: rss_kib(p.pid) / 1024 for n, (p, _) in daemons.items()}
        finally:
            for proc, _ in daemons.values():
                proc.terminate()
                proc.wait()
    print(f"idle cost of 10 schedules and 20 rules (two daemons, {IDLE_SECONDS:g} s quiet)")
    row("baseline daemon: CPU / RSS", f"{cpu['baseline']:.2f} % / {rss['baseline']:.1f} MB")
    row("with automation: CPU / RSS", f"{cpu['automation']:.2f} % / {rss['automation']:.1f} MB")
    row("automation's own CPU", f"{cpu['automation'] - cpu['baseline']:+.2f} %", "target < 0.5 %")
    row("automation's own RSS", f"{rss['automation'] - rss['baseline']:+.1f} MB", "target < 2 MB")


def main() -> None:
    asyncio.run(event_to_action())
    interlock_cost()
    idle_cost()
