"""Board sections: ``type`` picks the schema; gpio stays the default; the example's commented
arduino and stm32 sections are valid once uncommented."""

from __future__ import annotations

import re
from importlib import resources

import pytest

from edge.config.boards import board_section
from edge.config.loader import load_config
from edge.core.exc import ConfigError


def test_commented_board_examples_are_valid(write_config, isolated_env):
    text = resources.files("edge.config").joinpath("example.toml").read_text()
    block = text[text.index("# [boards.uno]"):text.index("[channels")]
    uncommented = re.sub(r"^# ?(\[boards|\w+ = )", r"\1", block, flags=re.M)
    config = load_config(str(write_config(uncommented)), env=isolated_env).config
    assert isinstance(config.boards["uno"], board_section("arduino"))
    assert isinstance(config.boards["nucleo"], board_section("stm32"))
    assert config.boards["uno"].pins["light"].mode.value == "analog"


def test_type_defaults_to_gpio(write_config, isolated_env):
    config = load_config(str(write_config("[boards.pi]\nsimulate = true\n")), env=isolated_env).config
    assert isinstance(config.boards["pi"], board_section("gpio"))


@pytest.mark.parametrize("text,expected", [
    ('[boards.x]\ntype = "esp32"\n', r"boards\.x\.type: unknown type 'esp32'; use one of: gpio, arduino, stm32"),
    ('[boards.x]\ntype = "stm32"\n', r"boards\.x\.port: required key is missing"),
    ('[boards.x]\ntype = "arduino"\nport = "p"\n[boards.x.pins]\nA0 = { mode = "analog", safe = "off" }\n',
     "not analog"),
])
def test_bad_board_sections_name_the_key(write_config, isolated_env, text, expected):
    with pytest.raises(ConfigError, match=expected):
        load_config(str(write_config(text)), env=isolated_env)


def test_usb_names_are_config_keys(write_config, isolated_env):
    from edge.config.loader import load_config

    text = ('[boards.uno]\ntype = "arduino"\nport = "/dev/edge-uno"\nserial_number = "8573531"\n'
            '[boards.nano]\ntype = "arduino"\nport = "/dev/edge-nano"\nusb_path = "platform-x-usb-0:1.3:1.0"\n')
    boards = load_config(str(write_config(text)), env=isolated_env).config.boards
    assert boards["uno"].serial_number == "8573531" and boards["nano"].usb_path.endswith("1.3:1.0")
