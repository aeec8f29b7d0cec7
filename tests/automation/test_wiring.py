"""``edge-cli config check`` explains every rule and interlock on an input in wiring terms (to be
checked against the wires before power is on), warns where a pulled-up input's ``on`` changed
meaning (it was a high line, it is now the switch closed), refuses the two old inversions with
what to write instead, and refuses an interlock over a fleet node's outputs."""

from __future__ import annotations

import json

import pytest

from tests.helpers import cli

FLOAT_SWITCH = """
[boards.gpio.aliases]
tank2 = "GPIO5"
mister = "GPIO22"
door = "GPIO6"
lid = "GPIO13"
[boards.gpio.pins]
tank2 = { mode = "input" }                  # a float switch to ground, pulled up
mister = { mode = "output", safe = "off" }
door = { mode = "input", pull = "down" }
lid = { mode = "input", pull = "none", active = "low" }

[[interlocks]]
name = "dry-run"
forbid = "mister on"
while = "tank2 on"

[[rules]]
name = "low-alarm"
when = "tank2 on"
then = "notify the tank is low"

[[rules]]
name = "doorbell"
when = "door pressed"
then = "notify someone at the door"

[[rules]]
name = "lid-edge"
when = "lid rising"
then = "notify the lid opened"
"""


def check(write_config, env, text: str, *extra: str):
    return cli("config", "check", "--config", str(write_config(text)), *extra, env=env)


def test_each_rule_and_interlock_on_an_input_is_told_in_wiring_terms(write_config, isolated_env):
    out = check(write_config, isolated_env, FLOAT_SWITCH)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert "  dry-run: mister refused while tank2 is on (its switch is closed: line low, " \
           "pulled up)" in lines
    assert "  rule low-alarm: runs when tank2 turns on (its switch is closed: line low, " \
           "pulled up)" in lines
    assert "  rule doorbell: runs when door turns on (its switch is closed: line high, " \
           "pulled down)" in lines
    assert "  rule lid-edge: runs when lid's line rises (its line is high, no pull)" in lines


def test_a_pulled_up_input_whose_meaning_changed_is_warned_about_once_each(write_config,
                                                                            isolated_env):
    out = check(write_config, isolated_env, FLOAT_SWITCH)
    warnings = [line for line in out.stderr.splitlines() if "now " in line]
    assert warnings == [
        "edge-cli: warning: interlocks.0 (dry-run): `tank2 on` now holds while its switch is "
        "closed: line low, pulled up; before this version it meant a high line; check it "
        "against the wiring, and see 'Changes' in the manual, docs/changes.md",
        "edge-cli: warning: rule low-alarm: `tank2 on` now fires when its switch is closed: line "
        "low, pulled up; before this version it meant a high line; check it against "
        "the wiring, and see 'Changes' in the manual, docs/changes.md"]  # door is pulled down, lid names its level
    data = json.loads(check(write_config, isolated_env, FLOAT_SWITCH, "--json").stdout)["data"]
    assert len(data["warnings"]) == 2 and len(data["wiring"]) == 4


def test_an_input_that_names_its_level_is_not_warned_about(write_config, isolated_env):
    text = FLOAT_SWITCH.replace('tank2 = { mode = "input" }',
                                'tank2 = { mode = "input", pull = "up", active = "low" }')
    out = check(write_config, isolated_env, text)
    assert out.returncode == 0 and "now holds" not in out.stderr and "now fires" not in out.stderr


@pytest.mark.parametrize("pin, words", [
    ('{ mode = "input", pull = "up", active_low = true }',
     'boards.gpio.pins.tank2: active_low applies to outputs; an input on while its line is low '
     'takes active = "low" (what pull = "up" means already: just remove active_low)'),
    ('{ mode = "input", pull = "down", active_low = true }',
     'boards.gpio.pins.tank2: active_low applies to outputs; an input on while its line is low '
     'takes active = "low"'),
    ('{ mode = "input", pull = "none" }',
     'boards.gpio.pins.tank2: an input with pull = "none" must say when it is on: add active = '
     '"high"'),
    ('{ mode = "output", active = "low" }',
     'boards.gpio.pins.tank2: active applies to input pins, not output'),
])
def test_the_old_inversions_are_config_errors_that_say_what_to_write(write_config, isolated_env,
                                                                       pin, words):
    text = FLOAT_SWITCH.replace('tank2 = { mode = "input" }', f"tank2 = {pin}")
    out = check(write_config, isolated_env, text)
    assert out.returncode == 2 and words in out.stderr, out.stderr


def test_mqtt_invert_is_a_config_error_that_says_to_name_the_pins_level(write_config,
                                                                         isolated_env):
    text = FLOAT_SWITCH + '[mqtt]\nurl = "mqtt://127.0.0.1:1"\n[mqtt.inputs.door]\ninvert = true\n'
    out = check(write_config, isolated_env, text)
    assert out.returncode == 2
    assert 'mqtt.inputs.door.invert: invert is gone' in out.stderr
    assert 'active = "high"' in out.stderr


NODE = """
[boards.gpio.aliases]
heater = "GPIO22"
[boards.gpio.pins]
heater = { mode = "output", safe = "off" }
[boards.shed]
type = "node"
node_id = "shed"
[boards.shed.pins]
cooler = { mode = "output", safe = "off" }
float = { mode = "input" }
[mqtt]
url = "mqtt://127.0.0.1:1"
"""


@pytest.mark.parametrize("interlock, key", [
    ('name = "heat-or-cool"\nexclusive = ["heater", "shed:cooler"]', "interlocks.0.exclusive"),
    ('name = "psu"\nat_most = 1\nof = ["heater", "shed:cooler"]', "interlocks.0.of"),
    ('name = "remote"\nforbid = "shed:cooler on"\nwhile = "heater on"', "interlocks.0.forbid"),
    ('name = "watch"\nforbid = "heater on"\nwhile = "shed:cooler on"', "interlocks.0.while"),
])
def test_an_interlock_over_a_nodes_outputs_is_refused(write_config, isolated_env, interlock, key):
    out = check(write_config, isolated_env, NODE + f"\n[[interlocks]]\n{interlock}\n")
    assert out.returncode == 2, out.stdout
    name = interlock.split('"')[1]
    assert f"{key}: interlock {name!r}:" in out.stderr
    assert "declare this interlock on the node itself" in out.stderr


def test_a_while_that_watches_a_nodes_input_is_allowed(write_config, isolated_env):
    out = check(write_config, isolated_env, NODE + '\n[[interlocks]]\nname = "dry"\n'
                'forbid = "heater on"\nwhile = "shed:float on"\n')
    assert out.returncode == 0, out.stderr
    assert "now holds" not in out.stderr  # the node says what its input's on means


async def test_a_while_on_an_offline_nodes_input_holds(write_config, isolated_env, mock_factory):
    """The node is offline (no broker here): what its input says is unknown, so the interlock
    holds (fail safe) and the heater is refused, naming why."""
    from edge.automation.assembly import Automation
    from edge.automation.interlocks import InterlockRefused
    from edge.config.loader import load_config
    from edge.hardware import build_hardware
    from tests.helpers import asker

    text = NODE + '\n[[interlocks]]\nname = "dry"\nforbid = "heater on"\nwhile = "shed:float on"\n'
    config = load_config(str(write_config(text)), env=isolated_env).config
    hardware = build_hardware(config, resident=False, pin_factory=mock_factory, hold_seconds=1)
    Automation(config, hardware, pin_factory=mock_factory)
    with pytest.raises(InterlockRefused, match=r"heater: refused by interlock dry \(board shed "
                                               r"is down\)"):
        await hardware.write("heater", True, asker("cli:me"))
    assert mock_factory.pin(22).state == 0
    await hardware.shutdown()
