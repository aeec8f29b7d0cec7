"""A scenario whose expectation is wrong fails at that step, named, with what was expected, what
was found and the last events (exit 1, and a JUnit failure); a scenario that is wrong is exit 2
naming the step; steps the config cannot do are exit 2 too; `--config` picks the config."""

from __future__ import annotations

from xml.etree import ElementTree

from tests.helpers import ROOT, cli

PLANT = """
[boards.gpio.aliases]
pump = "GPIO22"
tank_low = "GPIO6"
[boards.gpio.pins]
pump = { mode = "output", safe = "off", max_on_seconds = 120 }
tank_low = { mode = "input", pull = "down" }

[[interlocks]]
name = "dry-run"
forbid = "pump on"
while = "tank_low on"
"""
WRONG = """
config = "plant.toml"
[[steps]]
input = "tank_low"
value = "on"
[[steps]]
op = "gpio.write"
args = { pin = "pump", value = "on" }
[[steps]]
name = "the pump runs (it cannot: the tank is low)"
expect_pin = "pump"
is = "on"
[[steps]]
wait = "1h"
"""


def test_a_wrong_expectation_fails_at_its_step(tmp_path, isolated_env):
    (tmp_path / "plant.toml").write_text(PLANT)
    scenario = tmp_path / "wrong.scenario.toml"
    scenario.write_text(WRONG)
    junit = tmp_path / "junit.xml"
    out = cli("test", str(scenario), "--junit", str(junit), env=isolated_env)
    assert out.returncode == 1, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    failed = next(i for i, line in enumerate(lines) if line.lstrip().startswith("FAIL"))
    assert "step 3 (the pump runs (it cannot: the tank is low))" in lines[failed]
    assert lines[failed + 1].split() == ["expected:", "pump", "on"]
    assert lines[failed + 2].split() == ["got:", "pump", "off"]
    assert any("refused by interlock dry-run" in line for line in lines[failed + 3:])  # events
    assert "--    step 4 (wait 1h)" in out.stdout
    assert lines[-1].startswith("FAILED at step 3 of 4")
    suite = ElementTree.parse(junit).getroot()
    assert (suite.get("failures"), suite.get("skipped")) == ("1", "1")
    failure = suite.find("testcase/failure")
    assert failure is not None and failure.get("message") == "expected pump on, got pump off"


def test_a_wrong_scenario_is_exit_2_naming_the_step(tmp_path, isolated_env):
    (tmp_path / "plant.toml").write_text(PLANT)
    scenario = tmp_path / "bad.toml"
    scenario.write_text('config = "plant.toml"\n[[steps]]\nwait = "a while"\n')
    out = cli("test", str(scenario), env=isolated_env)
    assert out.returncode == 2
    assert "bad.toml: step 1 (wait): 'a while' is not a span of time" in out.stderr
    scenario.write_text('config = "plant.toml"\n[[steps]]\ninput = "pump"\nvalue = "on"\n')
    out = cli("test", str(scenario), env=isolated_env)
    assert out.returncode == 2 and "step 1 (input pump): pump is not an allowlisted input" in \
        out.stderr


def test_config_picks_the_config_and_a_real_board_runs_simulated(tmp_path, isolated_env):
    real = tmp_path / "real.toml"
    real.write_text(PLANT.replace("[boards.gpio.aliases]", "[boards.gpio]\nsimulate = false\n"
                                  "[boards.gpio.aliases]"))
    scenario = tmp_path / "s.toml"
    scenario.write_text('config = "nowhere.toml"\n[[steps]]\ninput = "tank_low"\nvalue = "on"\n'
                        '[[steps]]\nexpect_pin = "tank_low"\nis = "on"\n')
    out = cli("test", str(scenario), "--config", str(real), env=isolated_env)
    assert out.returncode == 0, out.stdout + out.stderr


def test_config_init_writes_a_starter_scenario_that_passes(tmp_path, isolated_env):
    config = tmp_path / "edge" / "config.toml"
    out = cli("config", "init", str(config), env=isolated_env)
    assert out.returncode == 0, out.stderr
    starter = config.parent / "scenario.toml"
    assert f"edge-cli test {starter}" in out.stdout
    run = cli("test", str(starter), env=isolated_env)
    assert run.returncode == 0, run.stdout + run.stderr


def test_the_runner_loads_no_model_and_no_charts(isolated_env):
    probe = """
import asyncio, sys
from pathlib import Path
from edge.scenario.files import read_scenario, scenario_config
from edge.scenario.runner import run_scenario
path = Path("examples/greenhouse.scenario.toml")
scenario = read_scenario(path)
results = asyncio.run(run_scenario(scenario, scenario_config(path, scenario, None)))
assert all(r.status == "ok" for r in results), results
heavy = ["matplotlib", "PIL", "numpy", "onnxruntime", "tokenizers", "openai", "httpx", "mcp",
         "aiomqtt", "serial", "pyfirmata2", "smbus2"]
print(" ".join(name for name in heavy if name in sys.modules))
"""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=isolated_env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == []
