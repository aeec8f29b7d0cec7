"""The commands a newcomer types from the README and the tutorials are commands ``edge-cli``
takes: each ``edge-cli ...`` line of their ```sh blocks parses with the real parser (the configs
they show are checked by tests/config/test_documented_examples.py, the greenhouse scenario they
run by tests/scenario/test_examples.py)."""

from __future__ import annotations

import re
import shlex

import pytest

from edge.cli.main import build_parser
from edge.core.exc import UsageError
from tests.helpers import ROOT

BLOCK = re.compile(r"^```sh\n(.*?)^```", re.M | re.S)
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs" / "tutorials").glob("*.md"))]


def typed_commands() -> list[tuple[str, str]]:
    """(page, command line) for each ``edge-cli`` line of a sh block, comments and ``&`` dropped."""
    found = []
    for page in PAGES:
        for block in BLOCK.findall(page.read_text()):
            for line in block.splitlines():
                words = shlex.split(line, comments=True)
                if words and words[-1] == "&":
                    words = words[:-1]
                if words[:1] == ["edge-cli"]:
                    found.append((page.relative_to(ROOT).as_posix(), shlex.join(words)))
    return found


def test_the_tutorials_show_commands():
    pages = {page for page, _ in typed_commands()}
    assert {"docs/tutorials/first-relay.md", "docs/tutorials/greenhouse.md"} <= pages
    assert len(typed_commands()) >= 10


@pytest.mark.parametrize(("page", "line"), typed_commands(), ids=[line for _, line in typed_commands()])
def test_each_command_parses(page, line):
    try:
        args = build_parser().parse_args(shlex.split(line)[1:])
    except (UsageError, SystemExit) as exc:
        pytest.fail(f"{page}: `{line}` is not a command edge-cli takes: {exc}")
    assert args.command


def test_a_mistyped_command_fails_here():
    with pytest.raises(UsageError):
        build_parser().parse_args(["gpio", "wirte", "pump", "on"])
