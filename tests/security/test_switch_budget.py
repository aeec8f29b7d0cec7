"""Each output's own budget of switches (``max_switches_per_minute``), through the hardware's
one door on gpiozero's mock pins: every caller draws on it together, the value a pin already has
is not a switch, the safe level and the auto-off timer are never refused (but count), and
one-shot ``edge-cli`` processes share it through the state directory."""

from __future__ import annotations

import asyncio
from itertools import pairwise

import pytest

from edge.config.loader import load_config
from edge.core.exc import ConfigError, PolicyDenied
from edge.hardware import build_hardware
from tests.helpers import asker, cli, until

PINS = """
[boards.gpio.aliases]
led = "GPIO17"
pump = "GPIO22"
fan = "GPIO18"
[boards.gpio.pins]
led = {{ mode = "output", safe = "off"{led} }}
pump = {{ mode = "output", safe = "off", max_on_seconds = 0.2{pump} }}
fan = {{ mode = "pwm" }}
"""


@pytest.fixture
async def door(write_config, isolated_env, mock_factory):
    """``await door(led=", max_switches_per_minute = 2")``: a resident hardware, started."""
    built = []

    async def make(led: str = "", pump: str = ""):
        text = PINS.format(led=led, pump=pump)
        config = load_config(str(write_config(text)), env=isolated_env).config
        hardware = build_hardware(config, resident=True, pin_factory=mock_factory)
        await hardware.start()
        built.append(hardware)
        return hardware

    yield make
    for hardware in built:
        await hardware.shutdown()


def test_defaults_protect_a_relay_and_inputs_take_no_budget(write_config, isolated_env,
                                                            mock_factory):
    config = load_config(str(write_config(PINS.format(led="", pump=""))), env=isolated_env).config
    hardware = build_hardware(config, resident=True, pin_factory=mock_factory)
    budgets = {p.pin: p.max_switches_per_minute for p in hardware.pin_list()}
    assert budgets == {"GPIO17": 6, "GPIO22": 6, "GPIO18": 60}
    text = '[boards.gpio.pins]\nbutton = { mode = "input", max_switches_per_minute = 3 }\n'
    with pytest.raises(ConfigError, match=r"boards\.gpio\.pins\.button: .*max_switches_per_minute "
                                          r"apply to output and pwm pins"):
        load_config(str(write_config(text)), env=isolated_env)


async def test_every_caller_draws_on_the_pins_one_budget(door, mock_factory):
    hardware = await door(led=", max_switches_per_minute = 3")
    await hardware.write("led", True, asker("telegram:42"))
    await hardware.write("led", False, asker("mqtt:edge-agent/kitchen/led/set"))
    await hardware.write("GPIO17", True, asker("rule:night"))
    with pytest.raises(PolicyDenied, match=r"^gpio:GPIO17 \(led\): switched 3 times in the last "
                                           r"minute \(max_switches_per_minute = 3\); try again "
                                           r"in \d+ s$"):
        await hardware.write("BOARD11", False, asker("cli:someone-else"))
    assert mock_factory.pin(17).state == 1
    await hardware.write("fan", True, asker("cli:someone-else"))  # another pin: its own budget


async def test_asking_for_the_value_a_pin_has_is_not_a_switch(door, mock_factory):
    hardware = await door(led=", max_switches_per_minute = 1")
    for _ in range(5):
        await hardware.write("led", False, asker("telegram:42"))  # it is off: nothing moves
    await hardware.write("led", True, asker("telegram:42"))
    await hardware.write("led", True, asker("telegram:7"))
    with pytest.raises(PolicyDenied, match="max_switches_per_minute = 1"):
        await hardware.write("led", False, asker("telegram:42"))


async def test_the_safe_level_is_never_refused_but_counts(door, mock_factory):
    hardware = await door(led=", max_switches_per_minute = 2")
    await hardware.write("led", True, asker("telegram:42"))
    await hardware.make_safe("led", asker("telegram:42"))  # the second switch
    with pytest.raises(PolicyDenied, match="switched 2 times"):
        await hardware.write("led", True, asker("telegram:42"))
    await hardware.make_safe("led", asker("telegram:42"))  # spent, and still allowed
    assert mock_factory.pin(17).state == 0


async def test_the_auto_off_timer_is_never_refused(door, mock_factory):
    hardware = await door(pump=", max_switches_per_minute = 1")
    await hardware.write("pump", True, asker("schedule:water"))  # the budget is spent
    await until(lambda: mock_factory.pin(22).state == 0, timeout=2)  # max_on_seconds = 0.2
    with pytest.raises(PolicyDenied, match="switched 2 times"):  # the timer's switch counted
        await hardware.write("pump", True, asker("schedule:water"))


async def test_callers_at_once_each_count_against_the_last_value_granted(door, mock_factory):
    hardware = await door(led=", max_switches_per_minute = 3")
    await hardware.write("led", True, asker("telegram:42"))
    results = await asyncio.gather(hardware.write("led", False, asker("mqtt:a")),
                                   hardware.write("led", True, asker("telegram:7")),
                                   hardware.write("led", False, asker("rule:c")),
                                   return_exceptions=True)
    assert [isinstance(r, PolicyDenied) for r in results] == [False, False, True]
    assert mock_factory.pin(17).state == 1 and switches(mock_factory.pin(17)) == 3


def switches(pin) -> int:
    return sum(a.state != b.state for a, b in pairwise(pin.states))


def test_one_shot_commands_share_the_budget_through_the_state_directory(isolated_env,
                                                                        write_config):
    """No agent: each ``edge-cli gpio write --hold`` is its own process; a hold's end (the safe
    level) counts too, so two holds spend a budget of 4."""
    config = str(write_config(PINS.format(led=", max_switches_per_minute = 4", pump="")))
    for _ in range(2):
        done = cli("gpio", "write", "led", "on", "--hold", "0.01", "--config", config,
                   env=isolated_env)
        assert done.returncode == 0, done.stderr
    refused = cli("gpio", "write", "led", "on", "--hold", "0.01", "--config", config,
                  env=isolated_env)
    assert refused.returncode == 1
    assert "switched 4 times in the last minute (max_switches_per_minute = 4)" in refused.stderr
