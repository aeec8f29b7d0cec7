"""Shared fixtures: an isolated environment (no user config, a temporary state directory),
gpiozero's own MockFactory with PWM-capable pins, and the loopback Telegram Bot API and
signal-cli daemon."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from gpiozero.pins.mock import MockFactory, MockPWMPin

from edge.config.loader import load_config
from tests.fakes.signal_server import FakeSignal
from tests.fakes.telegram_server import FakeTelegram
from tests.helpers import EDGE_CLI, ROOT  # noqa: F401 (re-exported for conftest users)

pytest_plugins = ["tests.setup_progress",  # slow set-ups say what they do (first: others import it)
                  "tests.emulation.fixtures",  # simavr and qemu boards, for every test module
                  "tests.fakes.inprocess"]  # a Runtime in the test's own loop (start_agent)


@pytest.fixture
def isolated_env(tmp_path, monkeypatch) -> dict[str, str]:
    """No EDGE_* variables, a fresh HOME and state directory; returns the environment."""
    for name in list(os.environ):
        if name.startswith("EDGE_") or name in ("STATE_DIRECTORY", "RUNTIME_DIRECTORY"):
            monkeypatch.delenv(name)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".local" / "state"))
    monkeypatch.setenv("EDGE_STATE_DIR", str(tmp_path / "state"))
    # keyword memory outside tests/memory: the onnx model is exercised there, and loading it in
    # every agent process would only slow the suite down
    monkeypatch.setenv("EDGE_MEMORY__EMBEDDER", "none")
    # the loopback model servers stand in for any endpoint, with every tool: the compact profile
    # a local endpoint gets by itself is tested where it is chosen (tests/agent/test_compact.py)
    monkeypatch.setenv("EDGE_PROVIDER__COMPACT_PROFILE", "false")
    return dict(os.environ)


@pytest.fixture
def mock_factory() -> MockFactory:
    factory = MockFactory(pin_class=MockPWMPin)
    yield factory
    factory.reset()


@pytest.fixture
def write_config(tmp_path):
    """Write a config file and return its path."""

    def write(text: str, name: str = "config.toml") -> Path:
        path = tmp_path / name
        path.write_text(text)
        return path

    return write


@pytest.fixture
def default_config(isolated_env):
    return load_config(env=isolated_env)


@pytest.fixture
def telegram() -> Iterator[FakeTelegram]:
    """The loopback Bot API; asked for before an agent, it outlives the agent."""
    with FakeTelegram() as server:
        yield server


@pytest.fixture
def signal_daemon() -> Iterator[FakeSignal]:
    """signal-cli's JSON-RPC daemon on loopback."""
    with FakeSignal() as server:
        yield server
