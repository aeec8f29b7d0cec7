"""edge-cli's exit codes are written once (``edge.core.exc.EXIT_CODES``): ``--help`` prints that
table, and the manual's "Exit codes:" paragraph (docs/how-to/operate.md) lists the same codes with the same meanings."""

from __future__ import annotations

import re

from edge.core.exc import EXIT_CODES
from tests.helpers import cli, manual_text


def readme_exit_codes() -> dict[int, str]:
    """The manual's "Exit codes: `0` success, `1` ..." list: each code and its meaning, without
    the parenthetical examples and with the backticks dropped."""
    text = manual_text()
    start = text.index("Exit codes: `0`")
    paragraph = " ".join(text[start:text.index(". With `--json`", start) + 1].split())
    plain = re.sub(r" \([^()]*\)", "", paragraph)
    pairs = re.findall(r"`(\d+)` (.+?)(?=, `\d+` |\.$)", plain)
    return {int(code): meaning.replace("`", "") for code, meaning in pairs}


def help_exit_codes(text: str) -> dict[int, str]:
    block = text.split("exit codes", 1)[1].split("\n", 1)[1]
    return {int(m[1]): m[2] for m in re.finditer(r"^  (\d+) +(\S.*)$", block, re.M)}


def test_the_readme_lists_the_codes_of_the_table():
    listed = readme_exit_codes()
    assert list(listed) == [0, 1, 2, 3, 4, 130]
    assert listed == EXIT_CODES


def test_help_lists_every_exit_code_as_the_readme_does(isolated_env):
    out = cli("--help", env=isolated_env)
    assert out.returncode == 0
    assert help_exit_codes(out.stdout) == readme_exit_codes()

