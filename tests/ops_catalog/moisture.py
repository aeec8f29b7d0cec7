"""A test-only operation, added as ``edge/ops/README.md`` says, in this one module: its tool (its
arguments, words and ``run``, acting through the agent's one door to the pins) and its
declaration. ``plant.moisture`` reads a soil sensor's digital output: dry below the threshold."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from edge.core.requester import Requester
from edge.hardware import Hardware
from edge.ops.operation import Chat, Kind, Operation
from edge.tools.base import ModelTool, ToolArgs, ToolResult


class MoistureArgs(ToolArgs):
    plant: str = Field(description="The plant's soil sensor pin (name or alias)")
    threshold: float = Field(default=0.5, ge=0.0, le=1.0,
                             description="Below this reading the soil is dry")


class PlantMoistureTool(ModelTool[MoistureArgs]):
    name = "plant_moisture"
    description = "Whether a plant's soil is wet or dry, from its sensor. Read-only."
    Params = MoistureArgs

    def __init__(self, hardware: Hardware):
        self.hardware = hardware

    async def run(self, params: MoistureArgs, requester: Requester) -> ToolResult:
        rule, value = await self.hardware.read(params.plant, requester)
        dry = value < params.threshold
        return ToolResult(True, f"{rule.label} is {'dry' if dry else 'wet'}",
                          data={"pin": rule.pin, "value": value, "dry": dry})


def parse_plant(words: list[str]) -> dict[str, Any] | None:
    return {"plant": words[0]} if len(words) == 1 else None


MOISTURE = Operation("plant.moisture", Kind.READ, PlantMoistureTool,
                     build=lambda parts: PlantMoistureTool(parts.hardware), remote=True, mcp=True,
                     chat=(Chat("/moisture PLANT", "whether a plant's soil is wet or dry",
                                parse_plant),))
