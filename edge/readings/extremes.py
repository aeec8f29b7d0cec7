"""A span's lowest, highest, first and last reading, each with its own time, read from the
history's rows rather than from the buckets a series is drawn in (a bucket's mean at the
bucket's start is neither a reading nor its time).

Within the raw tier's 48 hours they are readings to the second (SQLite's ``min()``/``max()``
hand back the other columns of the row they chose); an older span is read from the finest tier
that covers it, its lowest and highest stamped with the start of their 5-minute (or hourly)
row, and the last reading still exact when it is recent enough to be raw.

>>> import sqlite3
>>> db = sqlite3.connect(":memory:")
>>> _ = db.execute("CREATE TABLE raw (series INTEGER, at REAL, value REAL)")
>>> _ = db.executemany("INSERT INTO raw VALUES (1, ?, ?)", [(10.0, 5.0), (11.0, 2.0), (12.0, 4.0)])
>>> raw_extremes(db, 1, 0.0, 100.0)
Extremes(low=2.0, low_at=11.0, high=5.0, high_at=10.0, last=4.0, last_at=12.0, first_at=10.0, exact=True)
"""

from __future__ import annotations

import sqlite3

from edge.readings.series import Extremes

_GOOD = "WHERE series = ? AND {at} >= ? AND {at} < ? AND {value} IS NOT NULL"


def raw_extremes(db: sqlite3.Connection, series: int, since: float,
                 until: float) -> Extremes | None:
    """The figures of the raw readings in ``[since, until)``; None when there is no good one."""
    where = _GOOD.format(at="at", value="value")
    args = (series, since, until)
    low = db.execute(f"SELECT min(value), at FROM raw {where}", args).fetchone()
    if low is None or low[0] is None:
        return None
    high = db.execute(f"SELECT max(value), at FROM raw {where}", args).fetchone()
    last = db.execute(f"SELECT max(at), value FROM raw {where}", args).fetchone()
    first = db.execute(f"SELECT min(at) FROM raw {where}", args).fetchone()
    return Extremes(float(low[0]), float(low[1]), float(high[0]), float(high[1]),
                    float(last[1]), float(last[0]), float(first[0]), exact=True)


def tier_extremes(db: sqlite3.Connection, table: str, series: int, since: float,
                  until: float) -> Extremes | None:
    """The figures of ``table``'s rows (a tier) starting in ``[since, until)``, the last
    reading from the raw rows when some are in the span; None when no row has a good reading."""
    where = _GOOD.format(at="start", value="low")
    args = (series, since, until)
    low = db.execute(f"SELECT min(low), start FROM {table} {where}", args).fetchone()
    if low is None or low[0] is None:
        return None
    high = db.execute(f"SELECT max(high), start FROM {table} {where}", args).fetchone()
    first = db.execute(f"SELECT min(start) FROM {table} {where}", args).fetchone()
    raw_last = db.execute(f"SELECT max(at), value FROM raw {_GOOD.format(at='at', value='value')}",
                          args).fetchone()
    if raw_last is not None and raw_last[0] is not None:
        last_at, last = float(raw_last[0]), float(raw_last[1])
    else:
        row = db.execute(f"SELECT max(start), total / count FROM {table} {where} AND count > 0",
                         args).fetchone()
        last_at, last = float(row[0]), float(row[1])
    return Extremes(float(low[0]), float(low[1]), float(high[0]), float(high[1]), last, last_at,
                    float(first[0]), exact=False)
