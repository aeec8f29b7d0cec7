"""Every config the documentation shows passes ``edge-cli config check``: each ```toml block of
the README that is a whole config (a block with a line that is only a comment stands for what it
leaves out, and is not one), and the commented example ``config init`` writes."""

from __future__ import annotations

import re

import pytest

from tests.helpers import ROOT, cli

BLOCK = re.compile(r"^```toml\n(.*?)^```", re.M | re.S)


def readme_configs() -> list[str]:
    blocks = BLOCK.findall((ROOT / "README.md").read_text())
    return [b for b in blocks if not any(line.lstrip().startswith("#") for line in b.splitlines())]


def test_the_readme_shows_whole_configs():
    assert len(readme_configs()) >= 6  # the extraction finds them: the test below is not empty


@pytest.mark.parametrize("text", readme_configs(),
                         ids=[t.splitlines()[0].strip("[] ") for t in readme_configs()])
def test_each_readme_config_passes_config_check(write_config, isolated_env, text):
    out = cli("config", "check", "--config", str(write_config(text)), env=isolated_env)
    assert out.returncode == 0, (text, out.stderr)
    assert ": OK" in out.stdout


def test_the_example_config_passes_config_check(isolated_env):
    path = ROOT / "edge" / "config" / "example.toml"
    out = cli("config", "check", "--config", str(path), env=isolated_env)
    assert out.returncode == 0, out.stderr
    assert f"{path}: OK" in out.stdout
