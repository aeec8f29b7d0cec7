"""Where the MCP SDK is not installed (32-bit Pi OS: it needs cffi, which PyPI has no armv7 wheel
of), ``[mcp]`` is a config problem at its key and ``edge-cli mcp`` exits 1, each saying why; with
the SDK nothing changes."""

from __future__ import annotations

import argparse
import importlib.util
import platform
from pathlib import Path

import pytest

from edge.cli import mcp_cmd
from edge.config.loader import load_config
from edge.config.mcp import sdk_unavailable
from edge.core.exc import ConfigError

REAL_FIND_SPEC = importlib.util.find_spec
LISTEN_AND_SERVER = """
[mcp]
listen = "127.0.0.1:8765"
[[mcp.servers]]
name = "files"
command = "true"
"""


@pytest.fixture
def thirty_two_bit(monkeypatch: pytest.MonkeyPatch) -> None:
    """What a venv on 32-bit Pi OS holds: no MCP SDK."""
    monkeypatch.setattr(platform, "machine", lambda: "armv7l")
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *args: None if name == "mcp"
                        else REAL_FIND_SPEC(name, *args))


def load(tmp_path: Path, text: str = LISTEN_AND_SERVER) -> None:
    path = tmp_path / "config.toml"
    path.write_text(text)
    load_config(str(path))


def test_mcp_in_the_config_is_a_problem_at_each_key_saying_why(thirty_two_bit: None,
                                                                tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as refused:
        load(tmp_path)
    lines = str(refused.value).splitlines()
    for key in ("mcp.listen", "mcp.servers"):
        assert any(line.strip().startswith(f"{key}: MCP is not available on 32-bit Pi OS: the MCP "
                                           "SDK needs cffi") for line in lines), lines
    load(tmp_path, "[mcp]\n")


def test_edge_cli_mcp_exits_1_saying_why(thirty_two_bit: None, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "config.toml"
    path.write_text("")
    assert mcp_cmd.run(argparse.Namespace(config=str(path))) == 1
    assert "edge-cli mcp: MCP is not available on 32-bit Pi OS" in capsys.readouterr().err


def test_with_the_sdk_installed_mcp_is_available(tmp_path: Path) -> None:
    assert sdk_unavailable() is None
    load(tmp_path)
