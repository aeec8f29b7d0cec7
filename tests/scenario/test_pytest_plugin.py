"""The pytest plugin, as a person's own test suite uses it: a conftest-free test file beside a
config, run by pytest with the plugin (installed through the ``pytest11`` entry point, here
named with ``-p``), passes a true claim about the plant and fails a false one."""

from __future__ import annotations

import subprocess
import sys
import tomllib

from tests.helpers import ROOT

PLANT_TESTS = '''
import pytest


@pytest.fixture
def edge_people():
    return {"alice": "telegram:123456789"}


async def test_the_pump_never_runs_dry(edge_agent, edge_pins, edge_chat, edge_model):
    await edge_pins.press("tank_low")
    assert "refused by interlock dry-run" in await edge_chat("alice", "/gpio pump on")
    edge_model.turns = []
    assert await edge_pins.state("pump") == "off"


async def test_the_fan_follows_the_warmth(edge_agent, edge_sensors, edge_pins, edge_clock, edge_chat):
    before = edge_clock.now()
    await edge_sensors.set("greenhouse", "temperature", 30)
    await edge_agent.wait("2m")
    assert (edge_clock.now() - before).total_seconds() == 120
    assert await edge_pins.state("fan") == "on"
    assert any("fan on" in text for text in edge_chat.sent_to("alice"))


async def test_a_false_claim_fails(edge_agent, edge_pins):
    await edge_pins.press("tank_low")
    assert await edge_pins.state("pump") == "on"
'''


def test_the_plugin_is_registered_with_pytest():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["entry-points"]["pytest11"] == {
        "edge.scenario.pytest_plugin": "edge.scenario.pytest_plugin"}


def test_a_persons_own_tests_of_their_config(tmp_path, isolated_env):
    (tmp_path / "greenhouse.toml").write_text((ROOT / "examples" / "greenhouse.toml").read_text())
    (tmp_path / "pytest.ini").write_text("[pytest]\nasyncio_mode = auto\n"
                                         "asyncio_default_fixture_loop_scope = function\n"
                                         "edge_config = greenhouse.toml\n")
    (tmp_path / "test_my_greenhouse.py").write_text(PLANT_TESTS)
    out = subprocess.run([sys.executable, "-m", "pytest", "-p", "edge.scenario.pytest_plugin",
                          "-q", "-p", "no:cacheprovider", str(tmp_path)],
                         cwd=tmp_path, env={**isolated_env, "PYTHONPATH": str(ROOT)},
                         capture_output=True, text=True, timeout=300)
    assert "1 failed, 2 passed" in out.stdout, out.stdout + out.stderr
    assert "FAILED test_my_greenhouse.py::test_a_false_claim_fails" in out.stdout
