"""The scenario runner as pytest fixtures, for people who prefer Python to a scenario file.
Installed with the package (``[project.entry-points.pytest11]``); async tests need
pytest-asyncio (``asyncio_mode = "auto"``). Point it at the config with the ini option
``edge_config`` (or override the ``edge_config`` fixture)::

    async def test_the_pump_never_runs_dry(edge_agent, edge_pins, edge_chat):
        await edge_pins.press("tank_low")
        reply = await edge_chat("alice", "/gpio pump on")
        assert "refused by interlock dry-run" in reply
        assert await edge_pins.state("pump") == "off"

``edge_agent`` is the running agent (its ``runtime``, ``clock``, ``wait("10m")``), on simulated
boards and sensors in a state directory of its own; ``edge_people`` maps names to
``channel:id`` (override it); ``edge_clock`` the fast clock; ``edge_pins``, ``edge_sensors``,
``edge_chat`` and ``edge_model`` (the scripted model: ``edge_model.turns``) the rest.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:  # the plugin loads in every pytest run of an environment that has it: stay light
    from edge.automation.clock import ManualClock
    from edge.scenario.runner import ScenarioRun
    from edge.scenario.world import ScriptedModel


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini("edge_config", "the edge-agent config the edge_agent fixture runs", default="")


class Pins:
    """A running scenario's pins: press and release inputs, read any pin as on/off."""

    def __init__(self, run: ScenarioRun):
        self._run = run

    async def press(self, pin: str) -> None:
        await self._run.do(_step({"input": pin, "value": "on"}))

    async def release(self, pin: str) -> None:
        await self._run.do(_step({"input": pin, "value": "off"}))

    async def state(self, pin: str) -> str:
        from edge.scenario.runner import EXPECTER

        _, value = await self._run.runtime.hardware.read(pin, EXPECTER)
        return "on" if value >= 0.5 else "off"


class Sensors:
    def __init__(self, run: ScenarioRun):
        self._run = run

    async def set(self, sensor: str, quantity: str, value: float | None) -> None:
        """Hold ``value`` (None: release it)."""
        await self._run.do(_step({"sensor": f"{sensor}.{quantity}",
                                  "value": "release" if value is None else value}))


class Chat:
    def __init__(self, run: ScenarioRun):
        self._run = run

    async def __call__(self, person: str, text: str) -> str:
        """What the agent answers ``person`` (a name of ``edge_people``)."""
        channel, sender = self._run.person(person)
        seen = len(channel.sent)
        await self._run.do(_step({"chat": text, "from": person}))
        return next((t for who, t in channel.sent[seen:] if who == sender), "")

    def sent_to(self, person: str) -> list[str]:
        """Everything the agent has sent ``person`` (notifications too)."""
        channel, sender = self._run.person(person)
        return [text for who, text in channel.sent if who == sender]


def _step(raw: dict[str, Any]) -> Any:
    from edge.scenario.steps import KINDS

    kind = next(key for key in raw if key in KINDS)
    return KINDS[kind].model_validate(raw)


@pytest.fixture
def edge_config(request: pytest.FixtureRequest) -> Path:
    configured = request.config.getini("edge_config")
    if not configured:
        pytest.fail("set the ini option edge_config (the config file to try), or override the "
                    "edge_config fixture")
    return Path(request.config.rootpath) / str(configured)


@pytest.fixture
def edge_people() -> dict[str, str]:
    return {}


@pytest.fixture
async def edge_agent(edge_config: Path, edge_people: dict[str, str]) -> AsyncIterator[ScenarioRun]:
    from edge.config.loader import load_config
    from edge.scenario.runner import ScenarioRun
    from edge.scenario.steps import parse_scenario

    scenario = parse_scenario({"people": edge_people, "steps": [{"wait": "0s"}]})
    run = ScenarioRun(scenario, load_config(str(edge_config)))
    async with run.running():
        yield run


@pytest.fixture
def edge_clock(edge_agent: ScenarioRun) -> ManualClock:
    return edge_agent.clock


@pytest.fixture
def edge_pins(edge_agent: ScenarioRun) -> Pins:
    return Pins(edge_agent)


@pytest.fixture
def edge_sensors(edge_agent: ScenarioRun) -> Sensors:
    return Sensors(edge_agent)


@pytest.fixture
def edge_chat(edge_agent: ScenarioRun) -> Chat:
    return Chat(edge_agent)


@pytest.fixture
def edge_model(edge_agent: ScenarioRun) -> ScriptedModel:
    return edge_agent.runtime.model
