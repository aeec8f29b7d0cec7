"""``sensor_read``: the sensors' readings for the model, chat (``/sensors``) and ``edge-cli
sensors``. Reading a sensor never actuates anything, so it needs no approval; a fresh read goes
to the hardware (an analog board pin through the policy, as caller ``sensor:NAME``)."""

from __future__ import annotations

from pydantic import Field

from edge.core.exc import EdgeError
from edge.core.requester import Requester
from edge.sensors import SensorHub, format_rows
from edge.tools.base import ModelTool, ToolArgs, ToolResult
from peripherals.exc import BoardError


class SensorArgs(ToolArgs):
    name: str | None = Field(default=None, description="One sensor's name; all sensors when omitted")
    fresh: bool = Field(default=False, description="Measure now instead of giving the last polled reading")


class SensorReadTool(ModelTool[SensorArgs]):
    name = "sensor_read"
    description = ("Read the configured sensors (temperature, humidity, pressure, ADC channels, "
                   "the Pi's health): each quantity with its unit and how old the reading is.")
    Params = SensorArgs

    def __init__(self, hub: SensorHub):
        self.hub = hub

    async def run(self, params: SensorArgs, requester: Requester) -> ToolResult:
        names = [params.name] if params.name else list(self.hub.sensors)
        if params.name and params.name not in self.hub.sensors:
            known = ", ".join(self.hub.sensors) or "none configured"
            return ToolResult(False, error=f"no sensor {params.name!r} (sensors: {known})")
        errors = []
        for name in names:
            state = self.hub.sensors[name]
            if params.fresh or state.read_at is None:
                try:
                    await self.hub.measure(name)
                except (BoardError, EdgeError, OSError) as exc:
                    errors.append(f"{name}: {exc}")
        rows = [r for r in self.hub.rows() if r["name"] in names]
        text = format_rows(rows)
        if params.name and errors:  # the one sensor asked for failed
            return ToolResult(False, error=errors[0], data={"sensors": rows})
        return ToolResult(True, text, data={"sensors": rows})
