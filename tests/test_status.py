"""The status as text (``edge-cli status``, ``/status``): ages people can read, counts in words."""

from __future__ import annotations

import time
from contextlib import closing

from edge.status import format_status


def status(**parts):
    return {"daemon": {"running": True, "version": "x", "pid": 1, "uptime_seconds": 0.00296497},
            **parts}


def test_ages_and_uptimes_are_rounded_to_what_a_person_reads():
    now = time.time()
    text = format_status(status(
        board_events=[{"time": now - 0.003, "board": "uno", "kind": "input", "pin": "D2", "value": 1.0},
                      {"time": now - 125.2, "board": "uno", "kind": "down", "pin": None,
                       "value": None}],
        recent_errors=[{"time": now - 3.2, "level": "warning", "logger": "edge.x", "message": "m"}]))
    lines = text.splitlines()
    assert lines[0] == "edge-agent x: running (pid 1, up less than a second)"
    assert "  just now: uno input D2=1" in lines
    assert "  2 min 5 s ago: uno down" in lines
    assert "  3 s ago warning edge.x: m" in lines
    assert "0.00" not in text


def test_counts_read_as_words():
    rule = {"name": "lamp", "fired": 1}
    task = {"name": "scheduler", "healthy": False, "restarts": 1}
    text = format_status(status(rules=[rule], tasks=[task]))
    assert "rules: 1, fired once" in text and "task scheduler: DOWN, restarted once" in text
    text = format_status(status(rules=[rule, {"name": "fan", "fired": 2}]))
    assert "rules: 2, fired 3 times" in text


def test_the_next_job_is_shown_to_the_second_when_its_times_are():
    tick = {"name": "tick", "next_run": "2026-11-25T05:00:30.294+00:00", "to_the_second": True}
    water = {"name": "water", "next_run": "2026-11-25T06:00:00+00:00", "to_the_second": False}
    assert "schedules: 2, next tick at 2026-11-25 05:00:30 UTC" in format_status(status(schedules=[tick, water]))
    later = {**tick, "next_run": "2026-11-25T07:00:30+00:00"}
    assert "schedules: 2, next water at 2026-11-25 06:00 UTC" in format_status(status(schedules=[later, water]))


def test_the_next_job_is_shown_in_its_own_zone_as_schedules_shows_it():
    from edge.tools.automation import format_schedules

    water = {"name": "water", "spec": "cron 0 6 * * *", "timezone": "Europe/Berlin",
             "next_run": "2026-11-25T05:00:00+00:00", "last_run": None, "last_result": "",
             "source": "config", "added_by": "", "enabled": True, "action": "gpio write pump on",
             "to_the_second": False}
    line = next(x for x in format_status(status(schedules=[water])).splitlines()
                if x.startswith("schedules:"))
    assert line == "schedules: 1, next water at 2026-11-25 06:00 CET"
    assert "next 2026-11-25 06:00 CET" in format_schedules([water])
    summer = {**water, "next_run": "2026-07-01T04:00:00+00:00"}
    assert "next water at 2026-07-01 06:00 CEST" in format_status(status(schedules=[summer]))


def test_each_camera_says_its_pictures_and_its_last_failure_to_admins_only():
    cameras = [{"name": "door", "type": "v4l2", "snapshots": 3, "error": None},
               {"name": "porch", "type": "rpicam", "snapshots": 0,
                "error": "camera porch: rpicam-still failed (exit 1): no cameras available"}]
    lines = format_status(status(cameras=cameras)).splitlines()
    assert "camera door (v4l2): 3 pictures taken" in lines
    assert ("camera porch (rpicam): no picture yet, last picture FAILED: camera porch: "
            "rpicam-still failed (exit 1): no cameras available") in lines
    public = format_status(status(cameras=cameras), full=False).splitlines()
    assert "camera porch (rpicam): no picture yet, last picture FAILED" in public


def test_reading_the_memory_stores_size_leaves_no_connection_open(tmp_path):
    """A status is asked for every few seconds for months: each must close what it opened."""
    import gc
    import sqlite3

    from edge.status import memory_store_summary

    (tmp_path / "memory").mkdir()
    with closing(sqlite3.connect(tmp_path / "memory" / "brain.db")) as db:
        db.execute("CREATE TABLE memories (key TEXT)")
        db.commit()

    def connections() -> int:
        return sum(isinstance(o, sqlite3.Connection) for o in gc.get_objects())

    gc.collect()
    gc.disable()
    try:
        before = connections()
        for _ in range(20):
            assert memory_store_summary(tmp_path)["entries"] == 0
        assert connections() <= before
    finally:
        gc.enable()
