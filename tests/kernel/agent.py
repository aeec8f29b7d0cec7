"""The agent in the kernel guest: its config, `edge-cli` run there, and a running agent.

Line offsets are BCM numbers: the chip is labelled like the Pi 4's and LGPIOFactory opens
/dev/gpiochip0. ``line_value`` reads what a line is driven to; ``set_pull`` moves an input.
"""

from __future__ import annotations

import json
import signal
import time
from typing import Any

from tests.kernel.guest import PYTHON, Completed, KernelGuest

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


