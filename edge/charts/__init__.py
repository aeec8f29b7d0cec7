"""Charts of the sensor history, for people to look at rather than read: ``/chart`` in chat, the
``sensor_chart`` tool (a picture the model sends with its reply) and ``edge-cli sensors chart``.

- :mod:`~edge.charts.tracks`: the outputs the rules on a sensor switch, and when each was on, from
  the audit trail;
- :mod:`~edge.charts.draw`: the PNG (matplotlib's Agg backend, imported only there, when a chart
  is drawn: an agent that never draws one never loads it);
- :mod:`~edge.charts.service`: a sensor's chart from the history and the trail, and the agent's
  :class:`~edge.charts.service.SensorCharts`, which writes charts into the outbox.

``tests/charts/test_lightweight.py`` holds the agent to it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from edge.core.faces import lazy_face

if TYPE_CHECKING:
    from edge.charts.service import Chart, SensorCharts, chart_png, draw_chart, plotting_missing
    from edge.charts.tracks import OutputTrack

__all__ = ["Chart", "OutputTrack", "SensorCharts", "chart_png", "draw_chart", "plotting_missing"]

_HOMES = {
    "service": ("Chart", "SensorCharts", "chart_png", "draw_chart", "plotting_missing"),
    "tracks": ("OutputTrack",),
}
"""Each module, and the names of ``__all__`` it holds."""

__getattr__ = lazy_face(__name__, _HOMES)
