"""The reference pages under ``docs/reference/`` are written from the code (:mod:`edge.docs`): each
committed page is what the code says now, or this fails with the command that rewrites them."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from edge.core.exc import EXIT_CODES
from edge.docs import cli_page, config_page, contract_page, mqtt_page
from edge.docs.pages import COMMAND, PAGES, stale
from edge.ops.catalog import CATALOG
from tests.helpers import ROOT


@pytest.mark.parametrize("name", list(PAGES))
def test_the_committed_page_is_current(name):
    page = ROOT / "docs" / "reference" / name
    assert page.read_text() == PAGES[name](), f"docs/reference/{name} is stale: run `{COMMAND}`"


def test_a_changed_page_is_named_stale_with_the_command(tmp_path):
    shutil.copytree(ROOT / "docs" / "reference", tmp_path / "docs" / "reference")
    assert stale(tmp_path) == []
    (tmp_path / "docs" / "reference" / "cli.md").write_text("# Command line\n")
    (tmp_path / "docs" / "reference" / "errors.md").unlink()
    assert stale(tmp_path) == ["cli.md", "errors.md"]
    out = subprocess.run([sys.executable, "-m", "edge.docs", "--check", str(tmp_path)],
                         capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 1
    assert f"docs/reference/cli.md is stale: run `{COMMAND}`" in out.stderr
    written = subprocess.run([sys.executable, "-m", "edge.docs", str(tmp_path)],
                             capture_output=True, text=True, cwd=ROOT)
    assert written.returncode == 0 and stale(tmp_path) == []


def test_the_config_keys_carry_their_docstrings_types_and_defaults():
    page = config_page.markdown()
    assert "| `max_switches_per_minute` | integer (>= 1, <= 6000) |  | Outputs: at most this many " \
           "changes of value in any minute" in page
    assert "## `[boards.NAME]`\n\nWith `type = \"arduino\"`." in page
    assert "| `watchdog_ms` | integer (>= 0, <= 65535) | `1000` |" in page
    for table in ("[[rules]]", "[[schedules]]", "[[interlocks]]", "[mqtt]", "[mcp]", "[channels.telegram]",
                  "[sensors.NAME]", "[provider]", "[backup]"):
        assert f"## `{table}`" in page, table
    assert '| `autonomy` | `"full"` or `"supervised"` or `"readonly"` | `"supervised"` |' in page


def test_the_cli_page_has_every_command_and_its_options():
    page = cli_page.markdown()
    for command in ("run", "gpio write", "config check", "firmware flash", "fleet pair", "mcp", "backup create"):
        assert f"\n## edge-cli {command}\n" in page, command
    assert "--hold SECONDS" in page


def test_the_contract_pages_follow_the_code():
    codes = contract_page.exit_codes()
    for code, meaning in EXIT_CODES.items():
        assert f"| `{code}` | {meaning} |" in codes
    assert '"exit_code": 1' in codes and '"ok": false' in codes
    errors = contract_page.errors()
    assert "EdgeError: the agent refused or failed" in errors and "BoardError: a board or sensor" in errors
    tools = contract_page.mcp_tools()
    names = [name for op in CATALOG.values() for name in op.mcp_names]
    assert names and all(f"| `{name}` |" in tools for name in names)


def test_the_mqtt_page_lists_topics_kinds_and_discovery():
    page = mqtt_page.markdown()
    assert "| `edge-agent/greenhouse/PIN/set` | Commands: ``ON``/``OFF``" in page
    for kind in ("switch", "light", "servo", "binary_sensor", "analog"):
        assert f"| `{kind}` |" in page
    assert ("| `homeassistant/number/greenhouse/vent/config` | vent | `edge-agent/greenhouse/vent` | "
            "`edge-agent/greenhouse/vent/set` |") in page
    assert "`homeassistant/sensor/greenhouse/greenhouse_temperature/config` | Temperature" in page
