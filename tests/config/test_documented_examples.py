"""Every config the documentation shows passes ``edge-cli config check``: each ```toml block of
the manual (README.md and every page under docs/) that is a whole config (a block with a line that
is only a comment stands for what it leaves out, and is not one), and the commented example
``config init`` writes."""

from __future__ import annotations

import re

import pytest

from edge.config.edit import CONFIG_MODE
from tests.helpers import ROOT, cli, manual_pages

BLOCK = re.compile(r"^```toml\n(.*?)^```", re.M | re.S)


def manual_configs() -> list[tuple[str, str]]:
    """(page, block) for each whole config the manual shows."""
    return [(page.relative_to(ROOT).as_posix(), block) for page in manual_pages()
            for block in BLOCK.findall(page.read_text())
            if not any(line.lstrip().startswith("#") for line in block.splitlines())]


def test_the_manual_shows_whole_configs():
    assert len(manual_configs()) >= 7  # the extraction finds them: the test below is not empty
    pages = {page for page, _ in manual_configs()}
    assert "docs/tutorials/first-relay.md" in pages and "docs/how-to/home-assistant.md" in pages


@pytest.mark.parametrize(("page", "text"), manual_configs(),
                         ids=[f"{page}:{t.splitlines()[0].strip('[] ')}" for page, t in manual_configs()])
def test_each_manual_config_passes_config_check(write_config, isolated_env, page, text):
    path = write_config(text)
    path.chmod(CONFIG_MODE)  # as `config init` and install.sh write it: a token in it is not shown to all
    out = cli("config", "check", "--config", str(path), env=isolated_env)
    assert out.returncode == 0, (text, out.stderr)
    assert ": OK" in out.stdout


def test_the_example_config_passes_config_check(isolated_env):
    path = ROOT / "edge" / "config" / "example.toml"
    out = cli("config", "check", "--config", str(path), env=isolated_env)
    assert out.returncode == 0, out.stderr
    assert f"{path}: OK" in out.stdout
