"""Config: lookup order, environment overrides, and errors that name file, key and expectation."""

from __future__ import annotations

import tomllib

import pytest

from edge.config.edit import example_text
from edge.config.loader import load_config
from edge.config.model import Config
from edge.core.exc import ConfigError
from peripherals.base import PinMode


def test_no_file_gives_safe_defaults(isolated_env):
    loaded = load_config(env=isolated_env)
    assert loaded.path is None
    board = loaded.config.boards["gpio"]
    assert board.simulate is True
    assert board.aliases == {"led": "GPIO17", "button": "GPIO27"}
    assert board.pins["led"].mode is PinMode.OUTPUT and board.pins["led"].safe == "off"
    assert board.pins["button"].mode is PinMode.INPUT
    assert not loaded.config.provider.configured


def test_lookup_order_explicit_then_env_then_user(isolated_env, write_config, tmp_path):
    user = tmp_path / "home" / ".config" / "edge-agent" / "config.toml"
    user.parent.mkdir(parents=True)
    user.write_text('[provider]\nmodel = "user"\n')
    assert load_config(env=isolated_env).config.provider.model == "user"

    from_env = write_config('[provider]\nmodel = "env"\n', "env.toml")
    env = dict(isolated_env, EDGE_CONFIG=str(from_env))
    assert load_config(env=env).config.provider.model == "env"

    explicit = write_config('[provider]\nmodel = "explicit"\n', "explicit.toml")
    assert load_config(str(explicit), env=env).config.provider.model == "explicit"


def test_missing_explicit_file_is_an_error(isolated_env, tmp_path):
    with pytest.raises(ConfigError, match="config file not found"):
        load_config(str(tmp_path / "nope.toml"), env=isolated_env)


def test_environment_overrides_nested_keys(isolated_env):
    env = dict(isolated_env, EDGE_PROVIDER__BASE_URL="http://127.0.0.1:11434/v1",
               EDGE_PROVIDER__MODEL="qwen", EDGE_PROVIDER__API_KEY="sk-secret",
               EDGE_BOARDS__GPIO__SIMULATE="false", EDGE_SECURITY__MAX_ACTUATIONS_PER_MINUTE="5")
    cfg = load_config(env=env).config
    assert cfg.provider.base_url == "http://127.0.0.1:11434/v1"
    assert cfg.provider.api_key.get_secret_value() == "sk-secret"
    assert cfg.boards["gpio"].simulate is False
    assert cfg.security.max_actuations_per_minute == 5


def test_state_dir_from_environment(isolated_env, tmp_path):
    loaded = load_config(env=isolated_env)
    assert loaded.state_dir == tmp_path / "state"
    assert loaded.control_socket == tmp_path / "state" / "control.sock"


def test_wrong_value_names_file_key_and_expectation(isolated_env, write_config):
    path = write_config('[boards.gpio.pins.led]\nmode = "blink"\n')
    with pytest.raises(ConfigError) as err:
        load_config(str(path), env=isolated_env)
    text = str(err.value)
    assert str(path) in text
    assert "boards.gpio.pins.led.mode" in text
    assert "'input', 'output', 'pwm' or 'analog'" in text and "'blink'" in text
    assert err.value.exit_code == 2


def test_unknown_key_is_an_error(isolated_env, write_config):
    path = write_config('[provider]\nbase_ulr = "http://x"\n')
    with pytest.raises(ConfigError, match=r"provider\.base_ulr: unknown key"):
        load_config(str(path), env=isolated_env)


def test_unknown_environment_key_names_the_variable(isolated_env):
    env = dict(isolated_env, EDGE_PROVIDER__MODLE="x")
    with pytest.raises(ConfigError, match="EDGE_PROVIDER__MODLE"):
        load_config(env=env)


def test_bad_toml_names_the_file_and_line(isolated_env, write_config):
    path = write_config("[provider\nmodel = 1\n")
    with pytest.raises(ConfigError, match=rf"{path}: not valid TOML: .*line 1"):
        load_config(str(path), env=isolated_env)


def test_safe_level_on_an_input_pin_is_refused(isolated_env, write_config):
    path = write_config('[boards.gpio.pins.button]\nmode = "input"\nsafe = "on"\n')
    with pytest.raises(ConfigError, match="boards.gpio.pins.button: .*output and pwm pins"):
        load_config(str(path), env=isolated_env)


def test_example_config_is_valid_and_matches_the_defaults():
    example = Config.model_validate(tomllib.loads(example_text()))
    assert example.model_dump() == Config().model_dump()


def test_telegram_ids_may_be_toml_integers(write_config, isolated_env):
    from edge.config.loader import load_config as load

    text = "[channels.telegram]\nallowed_users = [123456789, \"42\"]\nadmins = [123456789]\n"
    telegram = load(str(write_config(text)), env=isolated_env).config.channels.telegram
    assert telegram.allowed_users == ["123456789", "42"] and telegram.admins == ["123456789"]


@pytest.mark.parametrize("text,key", [
    ('[channels.telegram]\nbot_token = 123456789\n', "channels.telegram.bot_token"),
    ('[provider]\napi_keys = ["sk-a", 987654321]\n', "provider.api_keys.1"),
])
def test_a_secret_of_the_wrong_type_is_named_but_never_shown(isolated_env, write_config, text, key):
    path = write_config(text)
    with pytest.raises(ConfigError) as err:
        load_config(str(path), env=isolated_env)
    line = next(line for line in str(err.value).splitlines() if key in line)
    assert line.strip() == (f"{key}: expected text (value not shown: it is a secret; write it as "
                            "a quoted string)")
    assert "123456789" not in str(err.value) and "987654321" not in str(err.value)


def test_every_board_takes_simulate_as_its_own_option(isolated_env, write_config):
    """``simulate`` is every board's option, declared once (no probe asks whether a section has
    it): an Arduino in memory on a laptop, the real one when it is left out."""
    path = write_config('[boards.uno]\ntype = "arduino"\nport = "/dev/ttyACM0"\nsimulate = true\n')
    assert load_config(str(path), env=isolated_env).config.boards["uno"].simulate is True
    unsimulated = write_config('[boards.uno]\ntype = "arduino"\nport = "/dev/ttyACM0"\n', "b.toml")
    assert load_config(str(unsimulated), env=isolated_env).config.boards["uno"].simulate is False
