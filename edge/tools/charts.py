"""``sensor_chart``: a sensor's history as a picture, for the model to send with its reply and for
``/chart`` in chat (which calls it, so both share one rate limit per sender).

Read-only: it draws from the history and the audit trail into the outbox and returns the
``[IMAGE:path]`` marker that makes the channel send the picture (:mod:`edge.channels.outbox`).
Each sender may have :data:`CHARTS_PER_MINUTE` charts a minute: a drawing keeps a core busy.
"""

from __future__ import annotations

from pydantic import Field

from edge.charts.service import SensorCharts
from edge.core.durations import parse_duration
from edge.core.requester import Requester
from edge.tools.base import ModelTool, ToolArgs, ToolResult
from edge.tools.pictures import PictureLimit, picture_sent

CHARTS_PER_MINUTE = 4
DEFAULT_SINCE = "24h"


class ChartArgs(ToolArgs):
    name: str = Field(description="The sensor's name (as in /sensors)")
    quantity: str | None = Field(default=None, description=(
        "One quantity, e.g. 'temperature'; every quantity the sensor reads when omitted"))
    since: str = Field(default=DEFAULT_SINCE, description="How far back, e.g. '6h', '24h', '7d'")
    outputs: list[str] | None = Field(default=None, max_length=8, description=(
        "Outputs (pin names or aliases) drawn as on/off tracks beneath; by default those the "
        "rules on the sensor switch and any other that switched in the span"))


class SensorChartTool(ModelTool[ChartArgs]):
    name = "sensor_chart"
    description = ("Draw a sensor's history as a chart (min/max band and mean, gaps where it was "
                   "failing, the outputs its rules switched beneath) and get the marker that "
                   "sends the picture with your reply. Read-only.")
    Params = ChartArgs

    def __init__(self, charts: SensorCharts, *, per_minute: int = CHARTS_PER_MINUTE):
        self.charts = charts
        self.limit = PictureLimit(per_minute, "chart")

    async def run(self, params: ChartArgs, requester: Requester) -> ToolResult:
        try:
            back = parse_duration(params.since)
        except ValueError as exc:
            return ToolResult(False, error=f"since: {exc}")
        if refused := self.limit.refusal(requester.caller):
            return refused
        path, chart = await self.charts.to_outbox(params.name, params.quantity, back=back,
                                                  outputs=params.outputs)
        return picture_sent(path, chart.caption(), "chart", {
            "bytes": len(chart.png), **chart.figures(),
            "series": [s.summary().as_dict() | {"quantity": s.quantity, "unit": s.unit}
                       for s in chart.series]})
