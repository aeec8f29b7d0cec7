"""Automation from config: sensors (a 1-Wire thermometer in a fake sysfs tree), rules on their
readings acting on mock pins, config errors before anything opens, the heartbeat's notices."""

from __future__ import annotations

import re

import pytest

from edge.automation.assembly import Automation
from edge.config.loader import load_config
from edge.core.exc import ConfigError
from edge.hardware import build_hardware
from tests.helpers import until

DEVICE = "28-0123456789ab"
BASE = """
[boards.gpio.aliases]
fan = "GPIO23"
[boards.gpio.pins]
fan = { mode = "output", safe = "off" }
[channels.telegram]
bot_token = "123:abc"
[sensors.soil]
type = "ds18b20"
interval_seconds = 0.05
"""
FAN_RULE = """
[[rules]]
name = "cool"
when = "soil.temperature > 25"
hysteresis = 2
cooldown_seconds = 0
then = "gpio write fan on"
on_clear = ["gpio write fan off", "notify to telegram:42 cool again at {value} {unit}"]
"""


def thermometer(root, millidegrees: int | None) -> None:
    folder = root / "sys/bus/w1/devices" / DEVICE
    folder.mkdir(parents=True, exist_ok=True)
    if millidegrees is None:
        (folder / "w1_slave").unlink(missing_ok=True)
        return
    (folder / "w1_slave").write_text("72 01 4b 46 7f ff 0e 10 57 : crc=57 YES\n"
                                     f"72 01 4b 46 7f ff 0e 10 57 t={millidegrees}\n")


class Telegram:
    name = "telegram"

    def __init__(self):
        self.sent = []

    async def send(self, message):
        self.sent.append((message.recipient, message.content))


def automation(text, write_config, env, factory, root):
    cfg = load_config(str(write_config(text)), env=env).config
    hw = build_hardware(cfg, resident=True, pin_factory=factory)
    return hw, Automation(cfg, hw, pin_factory=factory, sensor_root=root)


async def test_a_threshold_on_a_real_sensor_file_switches_the_fan(tmp_path, write_config, isolated_env,
                                                                   mock_factory):
    thermometer(tmp_path, 21000)
    hw, auto = automation(BASE + FAN_RULE, write_config, isolated_env, mock_factory, tmp_path)
    telegram = Telegram()
    await hw.start()
    await auto.start({"telegram": telegram}, {"telegram": frozenset({"42"})}, dict)
    fan = mock_factory.pin(23)
    try:
        await until(lambda: auto.sensors.latest().get("soil"))
        assert fan.state == 0
        thermometer(tmp_path, 26500)
        await until(lambda: fan.state == 1)
        thermometer(tmp_path, 24000)  # inside the hysteresis: stays on
        await until(lambda: auto.sensors.latest()["soil"]["temperature"].value == 24.0)
        assert fan.state == 1
        thermometer(tmp_path, 22500)
        await until(lambda: fan.state == 0)
        await until(lambda: telegram.sent)
        assert telegram.sent == [("42", "cool again at 22.5 °C")]
        assert auto.status()["rules"][0]["fired"] == 1
    finally:
        await auto.aclose()
        await hw.shutdown()


async def test_a_failing_sensor_keeps_its_last_reading_and_the_heartbeat_tells(
        tmp_path, write_config, isolated_env, mock_factory):
    thermometer(tmp_path, 21000)
    text = BASE + "[heartbeat]\ninterval_seconds = 1\ndown_after_seconds = 0\nnotify = [\"telegram:7\"]\n"
    hw, auto = automation(text, write_config, isolated_env, mock_factory, tmp_path)
    telegram = Telegram()
    await hw.start()
    await auto.start({"telegram": telegram}, {}, dict)
    try:
        await until(lambda: auto.sensors.latest().get("soil"))
        thermometer(tmp_path, None)
        row = (await until(lambda: [r for r in auto.status()["sensors"] if r["error"]]))[0]
        assert row["readings"]["temperature"]["value"] == 21.0 and row["failing_since"]
        await until(lambda: telegram.sent, timeout=5)
        assert telegram.sent[0][0] == "7" and "sensor soil is down" in telegram.sent[0][1]
        thermometer(tmp_path, 21500)
        await until(lambda: len(telegram.sent) == 2, timeout=5)
        assert "sensor soil is back" in telegram.sent[1][1]
    finally:
        await auto.aclose()
        await hw.shutdown()


@pytest.mark.parametrize("extra, error", [
    ('[[rules]]\nname = "x"\nwhen = "soil.humidity > 3"\nthen = "gpio write fan on"\n',
     r"rules\.0\.when: rule 'x': .*sensor soil has no 'humidity'"),
    ('[sensors.pot]\ntype = "analog"\npin = "gpio:GPIO5"\n',
     r"sensors\.pot\.pin: gpio:GPIO5 is not in the allowlist"),
    ('[sensors.pot]\ntype = "analog"\npin = "gpio:fan"\n',
     r"sensors\.pot\.pin: gpio:GPIO23 is not an analog pin"),
])
def test_config_errors_name_the_section(tmp_path, write_config, isolated_env, mock_factory,
                                        extra, error):
    with pytest.raises(ConfigError, match=error):
        automation(BASE + extra, write_config, isolated_env, mock_factory, tmp_path)


def test_the_commented_example_is_valid(tmp_path, write_config, isolated_env, mock_factory):
    from importlib import resources

    text = resources.files("edge.config").joinpath("example.toml").read_text()
    block = text[text.index("# [sensors.greenhouse]"):text.index("# [[schedules]]")]
    uncommented = re.sub(r"^# ?(\[|\w+ = )", r"\1", block, flags=re.M)
    hw, auto = automation(uncommented, write_config, isolated_env, mock_factory, tmp_path)
    assert auto.sensors.describe() == {"greenhouse": {"temperature": "°C", "pressure": "hPa",
                                                      "humidity": "%"}}
    (fan,) = auto.rules.rules
    assert (fan.name, fan.state.hysteresis, fan.state.for_seconds) == ("fan", 1.0, 60.0)


def test_the_manual_greenhouse_is_a_valid_config(tmp_path, write_config, isolated_env, mock_factory):
    from tests.helpers import ROOT

    readme = (ROOT / "docs" / "tutorials" / "greenhouse.md").read_text()
    section = readme[readme.index("A greenhouse: water at 06:00"):]
    start = section.index("```toml") + len("```toml")
    text = section[start:section.index("```\n", start)]
    cfg = load_config(str(write_config(text)), env=isolated_env).config
    hw = build_hardware(cfg, resident=True, pin_factory=mock_factory)
    auto = Automation(cfg, hw, pin_factory=mock_factory, state_dir=tmp_path)
    assert set(auto.sensors.describe()) == {"greenhouse", "soil", "pi"}
    assert [r.name for r in auto.rules.rules] == ["fan", "door", "arduino-gone"]
    assert [(r["name"], r["catch_up"]) for r in auto.schedule_rows()] == [("water", "once")]


EVERY_SECTION_WRONG = """
[boards.gpio.aliases]
fan = "GPIO23"
[boards.gpio.pins]
fan = { mode = "output", safe = "off" }
[sensors.pot]
type = "analog"
pin = "gpio:fan"
[[rules]]
name = "cool"
when = "nosuch pressed"
then = ["gpio write fan on", "gpio write GPIO5 on"]
[[rules]]
name = "warm"
when = "door pressed"
then = "sensor read cellar"
[[schedules]]
name = "water"
cron = "0 6 * * *"
action = "gpio write pump on"
[[interlocks]]
name = "dry"
forbid = "fan on"
while = "tank_low on"
[mqtt]
servos = ["fan"]
"""


@pytest.mark.parametrize("command", [["config", "check"], ["run"]])
def test_every_problem_is_told_at_once_with_the_file_and_dotted_keys(write_config, isolated_env,
                                                                      command):
    """Four rounds of edit-and-check for four bad entries became one: each problem on its own
    line, at its key as pydantic's problems are (``rules.0.when``, never ``rules[0]``)."""
    from tests.helpers import cli

    path = write_config(EVERY_SECTION_WRONG)
    result = cli(*command, "--config", str(path), env=isolated_env, stdin="")
    assert result.returncode == 2, (result.stdout, result.stderr)
    lines = result.stderr.splitlines()
    assert lines[0] == f"edge-cli: {path}: invalid configuration", result.stderr
    keys = [line.split(":")[0].strip() for line in lines[1:]]
    assert keys == ["sensors.pot.pin", "interlocks.0.while", "rules.0.when", "rules.0.then",
                    "rules.1.when", "rules.1.then", "schedules.0.action", "mqtt.servos.0"], \
        result.stderr
    assert "  rules.0.then: rule 'cool': gpio write GPIO5 on: gpio:GPIO5 is not in the allowlist" \
        in result.stderr
    assert "  rules.1.then: rule 'warm': sensor read cellar: no sensor 'cellar'" in result.stderr
    assert "[" not in "".join(keys)


def test_a_rule_on_a_pi_quantity_this_machine_cannot_read_still_passes(tmp_path, write_config,
                                                                       isolated_env, mock_factory):
    """No thermal zone under the sensor root (a laptop, CI, a container): the CPU temperature is
    not announced to Home Assistant, but a rule written for the Pi is still a valid config, so
    the same file checks on the workstation and runs on the Pi."""
    assert not (tmp_path / "sys/class/thermal").exists()
    text = BASE + ('[sensors.pi]\ntype = "pi"\ninterval_seconds = 30\n\n'
                   '[[rules]]\nname = "hot"\nwhen = "pi.cpu_temperature > 75"\n'
                   'then = ["gpio write fan on"]\n')
    _, auto = automation(text, write_config, isolated_env, mock_factory, tmp_path)
    assert "cpu_temperature" in auto.sensors.describe()["pi"]
    assert "cpu_temperature" not in auto.sensors.describe(present=True)["pi"]
    assert [r.name for r in auto.rules.rules] == ["hot"]
