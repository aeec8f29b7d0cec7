"""``[[schedules]]``: one of cron, every or at; errors name the schedule and say why, before the
agent starts."""

from __future__ import annotations

import re
from datetime import timedelta
from importlib import resources

import pytest

from edge.config.loader import load_config
from edge.config.schedules import ScheduleConfig, cron_fields, parse_every
from edge.core.exc import ConfigError, UsageError


def test_schedules_default_to_none(write_config, isolated_env):
    assert load_config(str(write_config("")), env=isolated_env).config.schedules == []


def test_a_schedule_of_each_kind(write_config, isolated_env):
    text = ('[[schedules]]\nname = "pump"\ncron = "0 6 * * *"\ntimezone = "Europe/Berlin"\n'
            'action = "gpio write pump on for 30s"\ncatch_up = "once"\n'
            '[[schedules]]\nname = "probe"\nevery = "10m"\naction = "sensor read greenhouse"\n'
            '[[schedules]]\nname = "frost"\nat = "2026-12-01 06:00"\naction = "notify admins frost"\n'
            'enabled = false\n')
    pump, probe, frost = load_config(str(write_config(text)), env=isolated_env).config.schedules
    assert (pump.kind, pump.spec, pump.timezone_name, pump.catch_up) == (
        "cron", "cron 0 6 * * *", "Europe/Berlin", "once")
    assert (probe.kind, probe.catch_up, probe.enabled, probe.timezone) == ("every", "skip", True, "")
    assert (frost.kind, frost.enabled) == ("at", False)


@pytest.mark.parametrize("text,every", [("90s", 90), ("10m", 600), ("1h30m", 5400), ("2d", 172800)])
def test_every_reads_people_durations(text, every):
    assert parse_every(text) == timedelta(seconds=every)


@pytest.mark.parametrize("fields,expected", [
    ('cron = "61 * * * *"', r"schedule 'pump': invalid cron expression '61 \* \* \* \*': .*out of range"),
    ('cron = "0 6 * *"', "schedule 'pump': invalid cron expression .*five fields"),
    ('cron = "0 0 30 2 *"', "schedule 'pump': invalid cron expression .*matches no date"),
    ('cron = "H 6 * * *"', "schedule 'pump': .*hashed"),
    ('every = "0m"', r"schedules\.0\.every: schedule 'pump': must be at least 1s \(got '0m'\)"),
    ('every = "soon"', r"schedules\.0\.every: schedule 'pump': 'soon' is not a duration"),
    ('at = "tomorrow"', "schedule 'pump': at = 'tomorrow' is not a time"),
    ('cron = "0 6 * * *"\nevery = "10m"', "schedule 'pump': give exactly one of cron, every or at "
                                          r"\(got cron, every\)"),
    ('action = "x"', "schedule 'pump': give exactly one of cron, every or at \\(got none\\)"),
    ('every = "10m"\ntimezone = "Europe/Springfield"', "schedule 'pump': unknown timezone 'Europe/Springfield'"),
    ('every = "10m"\ncatch_up = "all"',
     r"schedules\.0\.catch_up: schedule 'pump': expected 'skip' or 'once' \(got 'all'\)"),
])
def test_bad_schedules_say_which_and_why(write_config, isolated_env, fields, expected):
    action = "" if "action" in fields else 'action = "gpio write pump on"\n'
    text = f'[[schedules]]\nname = "pump"\n{fields}\n{action}'
    with pytest.raises(ConfigError, match=expected):
        load_config(str(write_config(text)), env=isolated_env)


def test_names_are_unique_and_identifiers(write_config, isolated_env):
    twice = '[[schedules]]\nname = "pump"\nevery = "1h"\naction = "a"\n' * 2
    with pytest.raises(ConfigError, match="names must be unique; 'pump' appears more than once"):
        load_config(str(write_config(twice)), env=isolated_env)
    with pytest.raises(ConfigError, match=r"schedules\.0\.name: .*'water pump': use letters"):
        load_config(str(write_config('[[schedules]]\nname = "water pump"\nevery = "1h"\naction = "a"\n')),
                    env=isolated_env)


def test_cron_aliases_expand():
    assert ScheduleConfig(name="n", cron="@daily", action="a").cron == "@daily"
    assert cron_fields("@daily") == "0 0 * * *" and cron_fields(" 0  6 * * MON-FRI") == "0 6 * * MON-FRI"


def test_the_commented_example_is_valid(write_config, isolated_env):
    text = resources.files("edge.config").joinpath("example.toml").read_text()
    block = text[text.index("# [[schedules]]"):]
    uncommented = re.sub(r"^# ?(\[\[schedules|\w+ = )", r"\1", block, flags=re.M)
    (water,) = load_config(str(write_config(uncommented)), env=isolated_env).config.schedules
    assert (water.name, water.cron, water.timezone, water.catch_up) == ("water", "0 6 * * *", "Europe/Berlin", "skip")


@pytest.mark.parametrize("fields,expected", [
    ({"name": "x", "cron": "61 * * * *", "action": "a"}, "cron: invalid cron expression"),
    ({"name": "x y", "every": "1h", "action": "a"}, "name: 'x y': use letters"),
    ({"name": "x", "every": "1h", "action": "a", "colour": "red"}, "colour: unknown field"),
    ({"name": "x", "every": "1h"}, "action: required key is missing"),
])
def test_a_job_from_chat_is_checked_into_a_usage_error(fields, expected):
    with pytest.raises(UsageError, match=expected):
        ScheduleConfig.checked(**fields)
    assert ScheduleConfig.checked(name="ok", every="1h", action="a").every == "1h"
