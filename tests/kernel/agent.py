"""The agent in the kernel guest: its config, `edge-cli` run there, and a running agent; an
agent of a test's own config run from this checkout, and the kernel's record of the values set
on its lines (the ``gpio_value`` trace events).

Line offsets are BCM numbers: the chip is labelled like the Pi 4's and LGPIOFactory opens
/dev/gpiochip0. ``line_value`` reads what a line is driven to; ``set_pull`` moves an input.
"""

from __future__ import annotations

import json
import re
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from tests.kernel.guest import PROJECT, PYTHON, Completed, GuestError, KernelGuest

VENV_BIN = str(PYTHON.parent)  # the guest sees the host's paths
EDGE_CLI = f"{VENV_BIN}/edge-cli"
HOME = "/tmp/edge"
CONFIG = f"{HOME}/config.toml"
STATE = f"{HOME}/state"
SOCKET = f"{STATE}/control.sock"

LED, RELAY, FAN, BUTTON, DOOR = 17, 22, 18, 27, 5

AGENT_CONFIG = f"""
[paths]
state_dir = "{STATE}"

[boards.gpio]
type = "gpio"
simulate = false
pin_factory = "lgpio"

[boards.gpio.aliases]
led = "GPIO{LED}"
relay = "GPIO{RELAY}"
fan = "GPIO{FAN}"
button = "GPIO{BUTTON}"
door = "GPIO{DOOR}"

[boards.gpio.pins]
led = {{ mode = "output", safe = "off" }}
relay = {{ mode = "output", safe = "off", active_low = true }}
fan = {{ mode = "pwm", safe = "off" }}
button = {{ mode = "input", pull = "up" }}
door = {{ mode = "input", pull = "up", bounce_ms = 400 }}
"""

ENV = {"EDGE_CONFIG": CONFIG, "EDGE_MEMORY__EMBEDDER": "none", "HOME": HOME}


def edge(guest: KernelGuest, *args: str, env: dict[str, str] | None = None,
         user: int | None = None) -> Completed:
    return guest.run([EDGE_CLI, *args], env={**ENV, **(env or {})}, timeout=120, user=user)


def until(check: Any, timeout: float = 30.0, interval: float = 0.2) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        assert time.monotonic() < deadline, "timed out waiting in the guest"
        time.sleep(interval)


def prepare(guest: KernelGuest) -> KernelGuest:
    """Write the agent's config into the guest (idempotent)."""
    guest.run(["mkdir", "-p", HOME])
    guest.write(CONFIG, AGENT_CONFIG)
    return guest


class Agent:
    """`edge-cli run` in the guest, as systemd would run it (no terminal, no chat input)."""

    def __init__(self, guest: KernelGuest, name: str):
        self.guest, self.name = guest, name
        guest.run(["rm", "-rf", STATE])
        guest.spawn(name, [EDGE_CLI, "run"], env=ENV)
        until(lambda: self.guest.run(["test", "-S", SOCKET])["rc"] == 0, timeout=90)

    def status(self) -> dict:
        out = edge(self.guest, "status", "--json")
        assert out["rc"] == 0, out
        return json.loads(out["stdout"])["data"]

    def stop(self, signum: int = signal.SIGTERM) -> dict:
        self.guest.signal(self.name, signum)
        return self.guest.wait(self.name, timeout=60)




TRACING = "/sys/kernel/tracing"
GPIO_SET = re.compile(r"^\s*\S.*?\s(\d+\.\d+): gpio_value: (\d+) set (\d)$", re.MULTILINE)
"""One ``gpio_value`` trace event: kernel seconds, the line's global number, the level set."""


def gpio_board(state: str) -> str:
    """A config's start for an agent on the guest's chip: its state directory and the Pi
    header, lgpio, no simulation; the test adds aliases, pins and the rest."""
    return (f'[paths]\nstate_dir = "{state}"\n\n[boards.gpio]\ntype = "gpio"\n'
            'simulate = false\npin_factory = "lgpio"\n')


def sh(guest: KernelGuest, script: str) -> str:
    """``sh -c SCRIPT`` in the guest; its output, or a GuestError saying what failed."""
    done = guest.run(["sh", "-c", script])
    if done["rc"] != 0:
        raise GuestError(f"{script!r} failed in the guest: {done['stderr']}")
    return done["stdout"]


@dataclass
class TracedAgent:
    """An agent of a test's own config in the guest, and the chip's line numbering."""

    guest: KernelGuest
    name: str
    base: int
    """The chip's first global GPIO number, by which trace events name its lines."""

    def stop(self) -> None:
        self.guest.signal(self.name, signal.SIGTERM)
        self.guest.wait(self.name, timeout=60)

    def sets(self, trace: str, lines: dict[int, str]) -> list[tuple[float, str, int]]:
        """(kernel seconds, name, level) for each value set on ``lines`` (offset -> name),
        in the order the kernel set them."""
        names = {self.base + offset: name for offset, name in lines.items()}
        return [(float(at), names[int(line)], int(level))
                for at, line, level in GPIO_SET.findall(trace) if int(line) in names]

    @contextmanager
    def traced(self) -> Iterator[list[str]]:
        """Record every ``gpio_value`` event while inside; the list holds the trace after."""
        recorded: list[str] = []
        sh(self.guest, f"cd {TRACING} && echo 0 > tracing_on && echo > trace"
                       " && echo 1 > events/gpio/gpio_value/enable && echo 1 > tracing_on")
        try:
            yield recorded
        finally:
            sh(self.guest, f"echo 0 > {TRACING}/tracing_on")
            recorded.append(self.guest.read(f"{TRACING}/trace"))
            sh(self.guest, f"cd {TRACING} && echo 0 > events/gpio/gpio_value/enable && "
                           "echo > trace && echo 1 > tracing_on")


@contextmanager
def traced_agent(guest: KernelGuest, name: str, home: str, config: str,
                 env: dict[str, str]) -> Iterator[TracedAgent]:
    """``python -m edge run`` from this checkout (the code under test) in the guest with
    ``config`` at ``home``/config.toml, once ready (its interlock watch running); tracefs
    mounted. Stopped on the way out."""
    sh(guest, f"rm -rf {home} && mkdir -p {home}")
    guest.write(f"{home}/config.toml", config)
    sh(guest, f"[ -d {TRACING}/events ] || mount -t tracefs tracefs {TRACING}")
    base = sh(guest, "for chip in /sys/class/gpio/gpiochip*; do "
                     '[ "$(cat $chip/label)" = pinctrl-bcm2711 ] && cat $chip/base; done')
    assert base.strip().isdigit(), f"no /sys/class/gpio entry for the chip: {base!r}"
    running = TracedAgent(guest, name, int(base))
    guest.spawn(name, [str(PYTHON), "-m", "edge", "run"], env=env, cwd=str(PROJECT))
    try:
        deadline = time.monotonic() + 120
        while "ready version=" not in (err := guest.output(name)[1]):
            assert "Traceback" not in err and time.monotonic() < deadline, err[-3000:]
            time.sleep(0.2)
        yield running
    finally:
        running.stop()
