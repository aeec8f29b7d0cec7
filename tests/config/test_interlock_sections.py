"""``[[interlocks]]`` in config: exactly one shape, and what could never hold refused at start-up
(and by ``edge-cli config check``) naming ``interlocks.N.KEY``: an unknown pin or sensor, an input
as the thing to forbid, a contradiction with a pin's safe level."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from edge.automation.assembly import Automation
from edge.config.interlocks import InterlockConfig
from edge.config.loader import load_config
from edge.core.exc import ConfigError
from edge.hardware import build_hardware

PINS = """
[boards.gpio.aliases]
pump = "GPIO22"
tank_low = "GPIO5"
vent = "GPIO23"
[boards.gpio.pins]
pump = { mode = "output", safe = "off" }
tank_low = { mode = "input", pull = "down" }
vent = { mode = "output", safe = "on" }
GPIO24 = { mode = "output", safe = "on" }
[sensors.tank]
type = "ds18b20"
"""


def build(text, write_config, env, factory, root):
    cfg = load_config(str(write_config(PINS + text)), env=env).config
    hw = build_hardware(cfg, resident=True, pin_factory=factory)
    return Automation(cfg, hw, pin_factory=factory, sensor_root=root)


@pytest.mark.parametrize("fields", [
    {"name": "x"},
    {"name": "x", "forbid": "pump on"},
    {"name": "x", "forbid": "pump on", "while": "tank_low on", "exclusive": ["a", "b"]},
    {"name": "x", "at_most": 1},
    {"name": "x", "exclusive": ["a"]},
])
def test_an_interlock_is_exactly_one_shape(fields):
    with pytest.raises(ValidationError):
        InterlockConfig.model_validate(fields)


def test_names_are_unique(write_config, isolated_env):
    text = '[[interlocks]]\nname = "a"\nexclusive = ["p", "q"]\n' * 2
    with pytest.raises(ConfigError, match="interlocks: names must be unique"):
        load_config(str(write_config(text)), env=isolated_env)


@pytest.mark.parametrize("body, error", [
    ('forbid = "nozzle on"\nwhile = "tank_low on"',
     r"interlocks\.0\.forbid: interlock 'x': forbid 'nozzle on': .*nozzle"),
    ('forbid = "pump on"\nwhile = "tank_high on"', r"interlocks\.0\.while: interlock 'x': while 'tank_high on'"),
    ('forbid = "pump on"\nwhile = "well.level < 3"', r"interlocks\.0\.while: interlock 'x': .*no sensor 'well'"),
    ('forbid = "pump on"\nwhile = "tank.humidity < 3"', r"interlocks\.0\.while: interlock 'x': .*no 'humidity'"),
    ('forbid = "tank_low on"\nwhile = "pump on"', r"interlocks\.0\.forbid: interlock 'x': .*tank_low is an input"),
    ('forbid = "pump off"\nwhile = "tank_low on"',
     r"interlocks\.0\.forbid: interlock 'x': forbid 'pump off' contradicts the pin's safe level \(off\)"),
    ('forbid = "vent on"\nwhile = "tank_low on"', r"contradicts the pin's safe level \(on\)"),
    ('forbid = "pump on"\nwhile = "board uno down"', r"no board 'uno'"),
    ('forbid = "pump on"\nwhile = "board gpio up"', r"`board NAME down`"),
    ('exclusive = ["vent", "GPIO24"]', r"vent, GPIO24 are on at their safe level"),
    ('at_most = 1\nof = ["pump", "tank_low"]', r"interlocks\.0\.of: interlock 'x': at_most: tank_low is an input"),
])
def test_what_could_never_hold_is_a_config_error(tmp_path, write_config, isolated_env,
                                                 mock_factory, body, error):
    with pytest.raises(ConfigError, match=error):
        build(f'[[interlocks]]\nname = "x"\n{body}\n', write_config, isolated_env, mock_factory,
              tmp_path)


def test_the_grammar_the_issue_writes_is_accepted(tmp_path, write_config, isolated_env,
                                                  mock_factory):
    auto = build('[[interlocks]]\nname = "dry-run"\nforbid = "pump on"\nwhile = "tank_low on"\n'
                 '[[interlocks]]\nname = "cold"\nforbid = "pump on"\n'
                 'while = "tank.temperature < 2"\n'
                 '[[interlocks]]\nname = "link"\nforbid = "pump on"\nwhile = "board gpio down"\n'
                 '[[interlocks]]\nname = "psu"\nat_most = 1\nof = ["pump", "vent"]\n',
                 write_config, isolated_env, mock_factory, tmp_path)
    assert [i.name for i in auto.interlocks.interlocks] == ["dry-run", "cold", "link", "psu"]
    assert auto.interlocks.interlocks[1].describe() == "forbid pump on while tank.temperature < 2"
