"""Sensor history: every reading of every sensor, kept in ``<state>/readings.db``.

:mod:`~edge.readings.series` (what is handed out: Series, Bucket, Summary),
:mod:`~edge.readings.store` (the SQLite file, its tiers and retention) and
:mod:`~edge.readings.recorder` (the hub's listener that batches readings into the store).
"""
