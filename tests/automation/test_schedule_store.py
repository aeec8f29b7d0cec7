"""The schedule store: last runs and runtime jobs survive a restart; a bad file is moved aside."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime

from edge.automation.schedule_store import JobState, RuntimeJob, ScheduleStore
from edge.config.schedules import ScheduleConfig

T = datetime(2026, 6, 1, 6, 0, tzinfo=UTC)


def test_state_and_runtime_jobs_round_trip(tmp_path):
    path = tmp_path / "schedules.json"
    store = ScheduleStore.open(path)
    store.state("pump").anchor = T
    store.state("pump").last_result = "ok"
    water = ScheduleConfig(name="water", every="2h", action="gpio write pump on for 30s", catch_up="once")
    store.add_runtime(RuntimeJob(water, "telegram:42", T))
    store.save(T)

    again = ScheduleStore.open(path)
    assert again.state("pump") == JobState(anchor=T, last_result="ok")
    assert again.runtime_jobs() == [RuntimeJob(water, "telegram:42", T)]
    assert again.saved_at == T
    assert oct(path.stat().st_mode & 0o777) == "0o600"


def test_remove_runtime_forgets_its_state(tmp_path):
    store = ScheduleStore.open(tmp_path / "schedules.json")
    store.add_runtime(RuntimeJob(ScheduleConfig(name="w", every="1h", action="a"), "cli", T))
    store.state("w").anchor = T
    assert store.remove_runtime("w") and not store.remove_runtime("w")
    assert store.state("w").anchor is None and store.runtime_jobs() == []


def test_keep_only_drops_jobs_that_are_gone(tmp_path):
    store = ScheduleStore.open(tmp_path / "schedules.json")
    store.state("old").anchor = store.state("pump").anchor = T
    store.keep_only({"pump"})
    store.save(T)
    assert list(json.loads((tmp_path / "schedules.json").read_text())["jobs"]) == ["pump"]


def test_a_corrupt_file_is_moved_aside_with_a_warning(tmp_path, caplog):
    path = tmp_path / "schedules.json"
    path.write_text('{"version": 1, "jobs": {"pump": {"anchor": ')
    with caplog.at_level(logging.WARNING):
        store = ScheduleStore.open(path)
    assert store.state("pump").anchor is None and store.saved_at is None
    aside = list(tmp_path.glob("schedules.json.corrupt-*"))
    assert len(aside) == 1 and aside[0].read_text().startswith('{"version"')
    assert not path.exists()
    assert "schedule_store_corrupt" in caplog.text and str(aside[0]) in caplog.text


def test_wrong_shapes_count_as_corrupt(tmp_path):
    for text in ('[]', '{"version": 1, "jobs": []}', '{"version": 1, "jobs": {"p": {"anchor": "06:00"}}}',
                 '{"version": 1, "jobs": {"p": {"anchor": "2026-06-01T06:00:00"}}}', '{"version": 9}'):
        path = tmp_path / "schedules.json"
        path.write_text(text)
        assert ScheduleStore.open(path).state("p").anchor is None, text
        assert not path.exists()


def test_an_unreadable_runtime_job_is_kept_but_not_loaded(tmp_path, caplog):
    path = tmp_path / "schedules.json"
    bad = {"config": {"name": "x", "cron": "99 * * * *", "action": "a"}, "added_by": "cli"}
    good = {"config": {"name": "y", "every": "1h", "action": "a"}, "added_by": "cli",
            "added_at": T.isoformat()}
    path.write_text(json.dumps({"version": 1, "jobs": {}, "runtime": [bad, good]}))
    store = ScheduleStore.open(path)
    assert [job.config.name for job in store.runtime_jobs()] == ["y"]
    assert "schedule_store_job_unreadable" in caplog.text
    store.save(T)
    assert bad in json.loads(path.read_text())["runtime"]
