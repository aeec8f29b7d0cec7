"""Config that cannot leak or surprise: secrets of the wrong type are not echoed, a wildcard
allowlist on a network channel is warned about, and hostile files or directories give a clear
error with exit 2 instead of a traceback."""

from __future__ import annotations

import json

import pytest

from edge.cli.main import main
from edge.config.loader import load_config
from edge.core.exc import ConfigError
from tests.helpers import cli


@pytest.mark.parametrize("text, key", [
    ("[provider]\napi_key = 918273645\n", "provider.api_key"),
    ("[channels.telegram]\nbot_token = 918273645\n", "channels.telegram.bot_token"),
    ("[memory]\napi_key = 918273645.5\n", "memory.api_key"),
    ("[provider]\napi_keys = [918273645]\n", "provider.api_keys.0"),
])
def test_a_secret_written_as_a_number_is_not_echoed(write_config, isolated_env, text, key):
    with pytest.raises(ConfigError) as caught:
        load_config(str(write_config(text)), env=isolated_env)
    message = str(caught.value)
    assert key in message and "it is a secret" in message
    assert "918273645" not in message


def test_ordinary_values_are_still_echoed(write_config, isolated_env):
    with pytest.raises(ConfigError, match=r"max_tokens.*got 'many'"):
        load_config(str(write_config('[provider]\nmax_tokens = "many"\n')), env=isolated_env)


@pytest.mark.parametrize("channel, key", [("telegram", "allowed_users"),
                                          ("signal", "allowed_numbers")])
def test_config_check_warns_about_a_wildcard_on_a_network_channel(write_config, isolated_env,
                                                                  capsys, channel, key):
    path = write_config(f'[channels.{channel}]\n{key} = ["*"]\n')
    assert main(["config", "check", "--config", str(path)]) == 0
    out, err = capsys.readouterr()
    assert "OK (1 warning(s))" in out
    assert f'warning: channels.{channel}.{key} = ["*"]' in err and "drive its pins" in err
    assert main(["config", "check", "--json", "--config", str(path)]) == 0
    assert "anyone on" in json.loads(capsys.readouterr().out)["data"]["warnings"][0]


def test_the_terminal_wildcard_is_not_a_warning(write_config, isolated_env, capsys):
    path = write_config('[channels.cli]\nallowed_users = ["*"]\n')
    assert main(["config", "check", "--config", str(path)]) == 0
    assert "warning" not in capsys.readouterr().err


@pytest.mark.parametrize("text", [
    "a = " + "[" * 50_000 + "]" * 50_000 + "\n",   # recursion inside the TOML parser
    "a = " + "[" * 200 + "]" * 200 + "\n",         # parses, but deeper than any config
    "[" + ".".join(["t"] * 200) + "]\n",           # dotted tables
])
def test_pathologically_nested_toml_is_a_config_error(write_config, isolated_env, text):
    result = cli("config", "check", "--config", str(write_config(text)), env=isolated_env)
    assert result.returncode == 2, result.stderr
    assert "nested more than 32 levels deep" in result.stderr
    assert "Traceback" not in result.stderr


def test_nested_json_in_an_environment_variable_is_not_a_traceback(isolated_env):
    env = {**isolated_env, "EDGE_CHANNELS__TELEGRAM__ALLOWED_USERS": "[" * 50_000}
    result = cli("config", "check", env=env)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "allowed_users" in result.stderr


def test_an_unusable_state_directory_stops_run_with_exit_2(write_config, isolated_env, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    env = {**isolated_env, "EDGE_STATE_DIR": str(blocker / "state")}
    path = write_config("[channels.cli]\nenabled = false\n")
    result = cli("run", "--config", str(path), env=env, timeout=30)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert f"{blocker / 'state'}: cannot create the state directory" in result.stderr


def test_an_unusable_log_directory_stops_run_with_exit_2(write_config, isolated_env, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    path = write_config(f'[channels.cli]\nenabled = false\n[logging]\nfile = "{blocker}/x.log"\n')
    env = {k: v for k, v in isolated_env.items() if k not in ("JOURNAL_STREAM", "INVOCATION_ID")}
    result = cli("run", "--config", str(path), env=env, timeout=30)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "cannot create the log file's directory ([logging] file)" in result.stderr
