"""``[backup] path``: the agent backs itself up as a supervised task, due ``every`` after the
newest archive in the folder, keeping the newest ``keep``; an unwritable folder shows the task
down with the error instead of stopping anything else."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from edge.backup.archive import verify_backup
from edge.backup.scheduled import ScheduledBackups
from edge.config.backup import BackupConfig
from tests.helpers import until

DAY = 86400.0


def database(path: Path) -> None:
    import sqlite3

    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE t (x)")
    db.execute("INSERT INTO t VALUES (1)")
    db.commit()
    db.close()


def test_keeps_the_newest_and_is_due_every_after_the_newest(tmp_path: Path,
                                                             caplog: pytest.LogCaptureFixture) -> None:
    database(tmp_path / "state" / "audit.db")
    now = [1_790_000_000.0]
    backups = ScheduledBackups(BackupConfig(path=str(tmp_path / "stick"), every="1d", keep=2),
                               tmp_path / "state", None, clock=lambda: now[0])
    assert backups.due_in() == 0  # an empty folder: now
    taken = []
    with caplog.at_level(logging.INFO, logger="edge.backup.scheduled"):
        for _ in range(3):
            taken.append(backups.take())
            assert backups.due_in() == DAY
            now[0] += DAY / 2
            assert backups.due_in() == DAY / 2
            now[0] += DAY / 2
    assert backups.archives() == taken[1:]  # the oldest removed
    assert "backup_written path=" in caplog.text and "removed=1" in caplog.text
    assert [m.path for m in verify_backup(taken[-1]).files] == ["state/audit.db"]


async def test_the_agent_takes_one_at_start_and_status_lists_the_task(start_agent, tmp_path: Path) -> None:
    stick = tmp_path / "stick"
    agent = await start_agent(f'[backup]\npath = "{stick}"\nkeep = 3\n')
    [archive] = await until(lambda: list(stick.glob("edge-backup-*.tar.gz")), timeout=30)
    manifest = verify_backup(archive)
    assert "config/config.toml" in [m.path for m in manifest.files]
    status = await agent.runtime.status()
    [task] = [t for t in status["tasks"] if t["name"] == "backup"]
    assert task["healthy"] is True
    await agent.stop()


async def test_an_unwritable_folder_shows_the_task_down(start_agent, tmp_path: Path) -> None:
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the folder should be")
    agent = await start_agent(f'[backup]\npath = "{blocked / "edge"}"\n')

    [task] = [t for t in agent.runtime.supervised_tasks() if t.name == "backup"]
    await until(lambda: task.down, timeout=30)
    assert "NotADirectoryError" in (task.last_error or "")
    status = await agent.runtime.status()
    assert [t["healthy"] for t in status["tasks"] if t["name"] == "backup"] == [False]
    assert not agent.task.done()  # the rest of the agent runs on


def test_the_commented_example_is_valid(write_config, isolated_env) -> None:
    import re
    from importlib import resources

    from edge.config.loader import load_config

    text = resources.files("edge.config").joinpath("example.toml").read_text()
    block = text[text.index("# [backup]"):]
    block = block[:block.index("\n\n")]
    uncommented = re.sub(r"^# ?(\[backup\]|\w+ = )", r"\1", block, flags=re.M)
    backup = load_config(str(write_config(uncommented)), env=isolated_env).config.backup
    assert (backup.path, backup.every_seconds, backup.keep, backup.secrets) == (
        "/mnt/usb/edge-backups", DAY, 7, False)
