"""The running agent on a real kernel GPIO character device (gpio-sim in a QEMU guest that
identifies as a Pi 4B): `edge-cli run` with simulate = false and pin_factory = "lgpio", driven
through its control socket while it runs."""

from __future__ import annotations

import json
import time

import pytest

from tests.kernel.agent import BUTTON, DOOR, FAN, LED, RELAY, Agent, edge, prepare, until
from tests.kernel.guest import KernelGuest


@pytest.fixture(scope="module")
def guest(kernel_guest: KernelGuest) -> KernelGuest:
    return prepare(kernel_guest)


@pytest.fixture(scope="module")
def agent(guest):
    running = Agent(guest, "agent")
    yield running
    running.stop()


def test_outputs_start_at_their_safe_level_and_status_names_factory_chip_and_model(guest, agent):
    assert guest.line_value(LED) == 0 and guest.line_value(FAN) == 0
    assert guest.line_value(RELAY) == 1  # active-low relay, safe "off": the line is high
    (board,) = agent.status()["boards"]
    assert board["connected"] is True and board["simulated"] is False
    assert board["info"] == {"pin_factory": "lgpio", "chip": "/dev/gpiochip0", "model": "4B",
                             "revision": "c03114"}
    assert "lgpio on /dev/gpiochip0" in board["detail"] and "4B" in board["detail"]
    pins = edge(guest, "pins")
    assert pins["rc"] == 0 and "lgpio on /dev/gpiochip0" in pins["stdout"]


def test_writes_through_the_daemon_reach_the_line(guest, agent):
    out = edge(guest, "gpio", "write", "led", "on", "--json")
    assert out["rc"] == 0 and json.loads(out["stdout"])["via"] == "daemon", out
    assert guest.line_value(LED) == 1
    assert edge(guest, "gpio", "write", "relay", "on")["rc"] == 0
    assert guest.line_value(RELAY) == 0  # active-low: on is a low line
    read = json.loads(edge(guest, "gpio", "read", "relay", "--json")["stdout"])
    assert read["data"]["value"] == 1.0  # ...and reads as on
    assert edge(guest, "gpio", "write", "relay", "off")["rc"] == 0
    assert guest.line_value(RELAY) == 1
    assert edge(guest, "gpio", "write", "led", "off")["rc"] == 0
    assert guest.line_value(LED) == 0


def test_pwm_through_the_daemon_toggles_the_line(guest, agent):
    assert edge(guest, "gpio", "pwm", "fan", "1")["rc"] == 0
    assert guest.line_value(FAN) == 1
    watch = guest.watch_lines([FAN])
    assert edge(guest, "gpio", "pwm", "fan", "0.5", "--frequency", "50")["rc"] == 0
    time.sleep(1.0)
    assert edge(guest, "gpio", "pwm", "fan", "0")["rc"] == 0
    edges = [value for _, line, value in watch.stop() if line == FAN]
    assert edges.count(1) >= 10 and edges.count(0) >= 10  # 50 Hz for a second, give or take
    assert guest.line_value(FAN) == 0


def _input_events(agent: Agent, pin: int) -> list[float]:
    return [e["value"] for e in agent.status().get("board_events", [])
            if e["kind"] == "input" and e["pin"] == f"GPIO{pin}"]


def test_an_input_edge_arrives_as_a_board_event(guest, agent):
    before = len(_input_events(agent, BUTTON))
    guest.set_pull(BUTTON, "pull-down")  # the button is pressed: the line goes low, it is on
    events = until(lambda: _input_events(agent, BUTTON)[before:])
    assert events == [1.0]
    guest.set_pull(BUTTON, "pull-up")  # released: off
    assert until(lambda: _input_events(agent, BUTTON)[before + 1:]) == [0.0]


def test_bounce_ms_debounces_in_the_kernel(guest, agent):
    burst = "; ".join(f"echo {p} > {{}}" for p in ("pull-down", "pull-up") * 4)
    buttons, doors = len(_input_events(agent, BUTTON)), len(_input_events(agent, DOOR))
    for line in (BUTTON, DOOR):  # eight edges within a few milliseconds, ending where it began
        guest.run(["sh", "-c", burst.format(*[guest.pull_path(line)] * 8)])
    time.sleep(1.5)
    assert len(_input_events(agent, BUTTON)) - buttons >= 2  # no debounce: the edges arrive
    assert len(_input_events(agent, DOOR)) == doors  # 400 ms debounce: nothing was stable
    guest.set_pull(DOOR, "pull-down")  # a real change, held: exactly one event (closed: on)
    assert until(lambda: _input_events(agent, DOOR)[doors:]) == [1.0]
    time.sleep(1.0)
    assert _input_events(agent, DOOR)[doors:] == [1.0]
    guest.set_pull(DOOR, "pull-up")


