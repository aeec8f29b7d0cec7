"""``sensor_history``: what a sensor read over a span of time, from the sensor history
(:mod:`edge.readings`), read-only: "how warm did it get last night" is answered from the record.

The model gets each quantity's summary (lowest and highest with when, the mean, the last value,
the gaps where the sensor was failing) and at most ``points`` (about a hundred) points;
``edge-cli sensors history`` gets the same through the control socket (or from the file when no
agent runs), with every point in ``--json`` and ``--csv``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping

from pydantic import AliasChoices, Field

from edge.core.requester import Requester
from edge.readings.moments import DEFAULT_SINCE, span
from edge.readings.store import ReadingStore
from edge.readings.text import series_text
from edge.tools.base import ModelTool, ToolArgs, ToolResult

MAX_POINTS = 1000


class SensorSpanArgs(ToolArgs):
    """A sensor over a span of time: what ``sensor_history`` and ``sensors.chart`` are asked."""

    name: str = Field(validation_alias=AliasChoices("name", "sensor"), description=(
        "The sensor's name, as sensor_read lists it"))
    """Also accepted as ``sensor``, as the model tool and ``edge-cli`` named it before."""
    quantity: str | None = Field(default=None, description=(
        "One quantity (temperature, humidity...); all the sensor's when omitted"))
    since: str = Field(default=DEFAULT_SINCE, description=(
        "Start: a span ago ('12h', '7d', '90m') or a time ('2026-11-25T18:00', local)"))
    until: str | None = Field(default=None, description="End, written the same way; now when omitted")


class SensorChartArgs(SensorSpanArgs):
    """What ``sensors.chart`` is asked: a sensor's span, and the outputs drawn beneath."""

    outputs: list[str] | None = Field(default=None, max_length=8, description=(
        "Outputs (pin names or aliases) drawn as on/off tracks beneath the chart; by default "
        "those the rules on the sensor switch and any other that switched in the span"))


class SensorHistoryArgs(SensorSpanArgs):
    points: int = Field(default=100, ge=1, le=MAX_POINTS,
                        description="At most this many points per quantity")


class SensorHistoryTool(ModelTool[SensorHistoryArgs]):
    name = "sensor_history"
    description = ("What a sensor read over a span of time, from the recorded history: lowest "
                   "and highest value with when, mean, last value, gaps where the sensor was "
                   "failing, and up to about a hundred points (min/mean/max per bucket). "
                   "Read-only; use it for questions about the past ('how warm did it get last "
                   "night').")
    Params = SensorHistoryArgs

    def __init__(self, store: ReadingStore, configured: Mapping[str, Mapping[str, str]],
                 before_read: Callable[[], Awaitable[object]] | None = None):
        """``configured``: sensor -> quantity -> unit of the config's sensors (one with no
        history yet is no error); ``before_read``: the recorder's flush, so the newest readings
        are in the answer."""
        self.store = store
        self.configured = configured
        self.before_read = before_read

    async def run(self, params: SensorHistoryArgs, requester: Requester) -> ToolResult:
        try:
            since, until = span(params.since, params.until, now=self.store.clock())
        except ValueError as exc:
            return ToolResult(False, error=str(exc))
        if self.before_read is not None:
            await self.before_read()
        found = await self.store.series(params.name, params.quantity, since, until,
                                        params.points)
        if found:
            return ToolResult(True, series_text(found),
                              data={"series": [one.as_dict() for one in found]})
        return await self._nothing(params.name, params.quantity)

    async def _nothing(self, sensor: str, quantity: str | None) -> ToolResult:
        """No history: of a sensor the config has, not yet (ok); of an unknown sensor or
        quantity, a failure with ``data.unknown`` (``edge-cli`` exits 2)."""
        known = {name: dict(units) for name, units in self.configured.items()}
        for name, units in (await self.store.catalog()).items():
            known.setdefault(name, {}).update(units)
        if sensor not in known:
            names = ", ".join(sorted(known)) or "none configured"
            return ToolResult(False, error=f"no sensor {sensor!r} (sensors: {names})",
                              data={"unknown": "sensor", "sensors": sorted(known)})
        if quantity is not None and quantity not in known[sensor]:
            have = ", ".join(known[sensor]) or "nothing yet"
            return ToolResult(False, error=f"sensor {sensor} has no {quantity!r} (it reads: {have})",
                              data={"unknown": "quantity", "quantities": list(known[sensor])})
        what = f"{sensor} {quantity}" if quantity else sensor
        return ToolResult(True, f"No history of {what} in that time: readings are kept while the "
                          "agent runs (ask for a longer span, e.g. 7d).", data={"series": []})
