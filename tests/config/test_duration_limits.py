"""Durations in the config file have a floor and a ceiling, and a config that ``edge-cli config
check`` accepts always starts: hostile values (``1e-9``, ``inf``, ``nan``, ``1e300``,
``99999999999d``) are refused with their key and exit 2, never an OverflowError traceback; an
``at`` time is checked in its own zone; ``for inf`` never holds a pin forever."""

from __future__ import annotations

import pytest

from edge.config.loader import load_config
from edge.core.exc import ConfigError
from tests.helpers import cli

HOSTILE_EVERY = {"1e-9": "must be at least 1s", "inf": "must be a finite duration",
                 "nan": "must be a finite duration", "1e300": "must be at most 3650d, 10 years",
                 "99999999999d": "must be at most 3650d, 10 years"}


def config_check(write_config, env, text: str):
    return cli("config", "check", "--config", str(write_config(text)), env=env)


def test_config_check_refuses_hostile_intervals_naming_each_key(write_config, isolated_env):
    text = "".join(f'[[schedules]]\nname = "job{i}"\nevery = "{every}"\naction = "notify hi"\n'
                   for i, every in enumerate(HOSTILE_EVERY))
    result = config_check(write_config, isolated_env, text)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr and "OverflowError" not in result.stderr
    for i, (every, why) in enumerate(HOSTILE_EVERY.items()):
        said = f"schedules.{i}.every: schedule 'job{i}': {why}"
        assert said in result.stderr and f"(got {every!r})" in result.stderr, result.stderr


@pytest.mark.parametrize("at", ['"9999-12-31 23:59"\ntimezone = "Etc/GMT+12"', '"9999-12-31T23:59:00-12:00"',
                                '"0001-01-01 00:30"\ntimezone = "Etc/GMT-12"'])
def test_an_at_time_is_checked_in_its_own_zone(write_config, isolated_env, at):
    """In UTC these are past the year 9999 (or before the year 1): refused by the check, not
    accepted there and fatal at every start (a restart loop under systemd)."""
    text = f'[[schedules]]\nname = "doom"\nat = {at}\naction = "notify hi"\n'
    result = config_check(write_config, isolated_env, text)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "schedule 'doom': at = '" in result.stderr, result.stderr
    assert "falls outside the years 1 to 9999 in UTC" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("action", ["gpio write led on for inf", "gpio pwm led 0.5 for 1e300",
                                    "gpio write led on for 99999999999d"])
def test_for_past_the_ceiling_is_refused_at_config_check(write_config, isolated_env, action):
    text = ('[boards.gpio.pins.led]\nmode = "pwm"\nsafe = "off"\n'  # no max_on_seconds
            f'[[schedules]]\nname = "glow"\nevery = "1h"\naction = "{action}"\n')
    result = config_check(write_config, isolated_env, text)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert f"schedules.0.action: schedule 'glow': '{action}': 'for': must be" in result.stderr, result.stderr


@pytest.mark.parametrize("section, key", [
    ("agent", "message_timeout_seconds"), ("provider", "timeout_seconds"),
    ("provider", "backoff_max_seconds"), ("provider", "max_retry_after_seconds"),
    ("provider", "cooldown_seconds"), ("security", "approval_timeout_seconds"),
    ("channels.telegram", "draft_interval_seconds"), ("memory", "open_timeout_seconds"),
    ("mqtt", "health_interval_seconds"), ("sessions", "idle_timeout_minutes"),
    ("memory", "hygiene_interval_hours"), ("boards.gpio.pins.led", "max_on_seconds"),
])
@pytest.mark.parametrize("value", ["inf", "1e300"])
def test_every_duration_key_has_a_ceiling(write_config, isolated_env, section, key, value):
    extra = 'mode = "output"\n' if section.startswith("boards") else ""
    text = f"[{section}]\n{extra}{key} = {value}\n"
    with pytest.raises(ConfigError) as caught:
        load_config(str(write_config(text)), env=isolated_env)
    line = next(line for line in str(caught.value).splitlines() if key in line)
    assert line.strip().startswith(f"{section}.{key}: must be "), line
    assert "(3650d, 10 years)" in line
