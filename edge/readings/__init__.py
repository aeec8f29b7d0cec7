"""Sensor history: every reading of every sensor, kept in ``<state>/readings.db``.

- :mod:`~edge.readings.series`: what is handed out: a :class:`Series` of :class:`Bucket` s and
  its :class:`Summary` (the charts draw these);
- :mod:`~edge.readings.store`: the SQLite file, its tiers (raw 48 h, 5-minute 90 days, hourly two
  years) and their retention;
- :mod:`~edge.readings.extremes`: a span's lowest, highest and last reading with their own
  times, from the rows rather than the buckets;
- :mod:`~edge.readings.recorder`: the sensor hub's listener, a bounded buffer written by a
  supervised task every few seconds;
- :mod:`~edge.readings.moments` and :mod:`~edge.readings.text`: spans as people write them
  (``12h``, ``2026-11-25T18:00``) and a history in words or CSV.

The model reads it through the ``sensor_history`` tool (:mod:`edge.tools.sensor_history`), people
through ``edge-cli sensors history`` and ``sensors chart`` (:mod:`edge.cli.sensor_history_cmd`).

The face is lazy (PEP 562): the names in ``__all__`` load from their modules when first used, so
importing any module of the package (which runs this file first) loads none of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from edge.core.faces import lazy_face

if TYPE_CHECKING:
    from edge.readings.moments import parse_moment, span
    from edge.readings.recorder import ReadingRecorder
    from edge.readings.series import Bucket, Series, Summary
    from edge.readings.store import READINGS_FILE, Entry, ReadingStore
    from edge.readings.text import series_csv, series_text

__all__ = ["READINGS_FILE", "Bucket", "Entry", "ReadingRecorder", "ReadingStore", "Series",
           "Summary", "parse_moment", "series_csv", "series_text", "span"]

_HOMES = {
    "moments": ("parse_moment", "span"),
    "recorder": ("ReadingRecorder",),
    "series": ("Bucket", "Series", "Summary"),
    "store": ("READINGS_FILE", "Entry", "ReadingStore"),
    "text": ("series_csv", "series_text"),
}
"""Each module, and the names of ``__all__`` it holds."""

__getattr__ = lazy_face(__name__, _HOMES)
