"""ModelTool: the JSON schema the model sees comes from the parameter model, and arguments that do
not fit it come back as one failed result naming every problem, before ``run`` is reached."""

from __future__ import annotations

from typing import Literal

import pytest
from pydantic import Field

from edge.core.exc import EdgeError
from edge.tools.automation import ScheduleArgs
from edge.tools.base import ModelTool, ToolArgs, ToolResult, schema_of
from edge.tools.memory import RecallArgs, StoreArgs
from edge.tools.sensors import SensorArgs
from tests.helpers import asker


class DimArgs(ToolArgs):
    pin: str = Field(min_length=1, description="The pin")
    level: float = Field(ge=0, le=1)
    fade: Literal["none", "slow"] = "none"
    seconds: float | None = Field(default=None, gt=0)


class DimTool(ModelTool[DimArgs]):
    name = "dim"
    description = "Dim a light."
    Params = DimArgs

    def __init__(self) -> None:
        self.seen: list[DimArgs] = []

    async def run(self, params: DimArgs, requester) -> ToolResult:
        self.seen.append(params)
        if params.pin == "broken":
            raise EdgeError("the board is down")
        return ToolResult(True, f"{params.pin} at {params.level:g}")


async def test_arguments_are_parsed_into_the_model():
    tool = DimTool()
    result = await tool.execute({"pin": "lamp", "level": "0.5", "seconds": 3}, asker())
    assert result.success and result.output == "lamp at 0.5"
    assert tool.seen == [DimArgs.model_validate({"pin": "lamp", "level": 0.5, "seconds": 3.0})]
    assert (tool.seen[0].fade, tool.seen[0].seconds) == ("none", 3.0)


async def test_every_problem_is_reported_with_where_it_is_and_run_is_not_reached():
    tool = DimTool()
    result = await tool.execute({"pin": "", "level": 2, "fade": "fast", "seconds": 0, "x": 1},
                                asker())
    assert not result.success and tool.seen == []
    assert result.error == ("invalid arguments: pin: must not be empty; level: must be at most 1 "
                            "(got 2); fade: expected 'none' or 'slow' (got 'fast'); seconds: must be "
                            "greater than 0 (got 0); x: unknown key")


@pytest.mark.parametrize("args,error", [
    (None, "invalid arguments: pin: required key is missing; level: required key is missing"),
    ({}, "invalid arguments: pin: required key is missing; level: required key is missing"),
    (["lamp", 1], "invalid arguments: arguments: expected a table (got a list)"),
])
async def test_missing_or_shapeless_arguments(args, error):
    result = await DimTool().execute(args, asker())
    assert (result.success, result.error) == (False, error)


async def test_a_failure_inside_run_is_a_failed_result():
    result = await DimTool().execute({"pin": "broken", "level": 1}, asker())
    assert (result.success, result.error) == (False, "the board is down")


def test_the_schema_keeps_the_shape_models_are_given():
    tool = DimTool()
    assert tool.parameters_schema() == {
        "type": "object",
        "properties": {
            "pin": {"type": "string", "minLength": 1, "description": "The pin"},
            "level": {"type": "number", "minimum": 0, "maximum": 1},
            "fade": {"enum": ["none", "slow"], "type": "string", "default": "none"},
            "seconds": {"anyOf": [{"type": "number", "exclusiveMinimum": 0}, {"type": "null"}],
                        "default": None},
        },
        "required": ["pin", "level"],
        "additionalProperties": False,
    }


def test_the_schema_handed_out_is_a_copy():
    tool = DimTool()
    tool.parameters_schema()["properties"].clear()
    assert list(tool.parameters_schema()["properties"]) == ["pin", "level", "fade", "seconds"]


def test_the_tools_parameter_schemas():
    sensor = schema_of(SensorArgs)
    assert sensor["properties"]["name"] == {
        "anyOf": [{"type": "string"}, {"type": "null"}], "default": None,
        "description": "One sensor's name; all sensors when omitted"}
    assert "required" not in sensor and sensor["additionalProperties"] is False
    assert schema_of(RecallArgs)["properties"]["limit"] == {
        "type": "integer", "minimum": 1, "maximum": 20, "default": 5,
        "description": "How many memories at most"}
    store = schema_of(StoreArgs)
    assert store["required"] == ["key", "content"]
    assert store["properties"]["category"]["anyOf"] == [
        {"enum": ["core", "daily", "conversation"], "type": "string"}, {"type": "string"}]
    assert store["properties"]["key"]["maxLength"] == 200
    schedule = schema_of(ScheduleArgs)
    assert schedule["required"] == ["name", "action"]
    assert schedule["properties"]["catch_up"] == {"enum": ["skip", "once"], "type": "string",
                                                  "default": "skip"}
