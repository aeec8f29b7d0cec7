"""Agent fixtures: hardware on MockFactory, a session store in a temp dir, an Agent factory."""

from __future__ import annotations

import pytest

from edge.agent.pipeline import Agent, AgentSettings
from edge.agent.preflight import ChannelAccess, Preflight
from edge.agent.sessions import SessionStore
from edge.config.loader import load_config
from edge.hardware import build_hardware
from edge.tools.gpio import hardware_tools
from tests.agent.intent_prompts import EVALUATION
from tests.helpers import msg  # noqa: F401 (for modules not yet importing tests.helpers)


@pytest.fixture
async def hardware(default_config, mock_factory):
    hw = build_hardware(default_config.config, resident=True, pin_factory=mock_factory)
    await hw.start()
    yield hw
    await hw.shutdown()


@pytest.fixture
async def eval_hardware(write_config, isolated_env, mock_factory):
    """The evaluation's pins (:mod:`tests.agent.intent_prompts`) on MockFactory."""
    config = load_config(write_config(EVALUATION), env=isolated_env).config
    hw = build_hardware(config, resident=True, pin_factory=mock_factory)
    await hw.start()
    yield hw
    await hw.shutdown()


@pytest.fixture
def make_agent(hardware, tmp_path):
    def make(provider=None, **settings) -> Agent:
        async def status():
            return "status text"

        settings.setdefault("workspace", tmp_path / "workspace")
        access = {"cli": ChannelAccess(frozenset({"*"})), "test": ChannelAccess(frozenset({"alice", "bob"}))}
        return Agent(hardware_tools(hardware), hardware, provider,
                     SessionStore(tmp_path / "sessions"), status, AgentSettings(**settings),
                     Preflight(access))

    return make


