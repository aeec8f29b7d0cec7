"""The scenarios shipped in examples/ pass with `edge-cli test` (the manual's greenhouse, and every
door to the pins against its interlock), and the greenhouse tutorial's config is the one they try."""

from __future__ import annotations

import re
from xml.etree import ElementTree

import pytest

from tests.helpers import ROOT, cli

EXAMPLES = ROOT / "examples"


@pytest.mark.parametrize("scenario", ["greenhouse.scenario.toml", "every-door.scenario.toml"])
def test_a_shipped_scenario_passes(scenario, isolated_env, tmp_path):
    junit = tmp_path / "junit.xml"
    out = cli("test", str(EXAMPLES / scenario), "--junit", str(junit), env=isolated_env)
    assert out.returncode == 0, out.stdout + out.stderr
    assert re.search(r"passed: \d+ steps", out.stdout)
    suite = ElementTree.parse(junit).getroot()
    assert suite.get("failures") == "0" and int(suite.get("tests")) == len(suite)


def test_the_greenhouse_scenario_crosses_summer_time():
    out_lines = (EXAMPLES / "greenhouse.scenario.toml").read_text()
    assert 'start = "2026-03-28 05:00"' in out_lines  # the night Berlin moves to summer time


def test_the_manual_greenhouse_is_the_example_config():
    readme = (ROOT / "docs" / "tutorials" / "greenhouse.md").read_text()
    start = readme.index("A greenhouse: water at 06:00")
    block = readme[readme.index("```toml\n", start) + 8:readme.index("```", readme.index(
        "```toml\n", start) + 8)]
    example = (EXAMPLES / "greenhouse.toml").read_text()
    assert example.split("\n", 2)[2] == block
