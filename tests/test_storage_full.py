"""A state directory that is full or read-only: the pins switch and their safety timers fire,
the audit trail counts what it could not keep, the admins are told once (and once more when it
recovers), and a model turn answers in words.

Each case runs ``tests/storage_full_child.py`` in a user and mount namespace (``unshare -rm``)
on a 2 MB tmpfs: the only way an unprivileged test gets a file system it can fill to the brim
or remount read-only. The child runs the door to the pins, its audit trail, the sessions and a
model turn (a scripted provider) in one process rather than the whole agent over its control
socket: the agent's lock, its socket and its channels live in the state and runtime directories
this test fills, which would make the setup, not the behaviour, what fails."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import ROOT


def run_on_tmpfs(tmp_path: Path, mode: str) -> dict[str, object]:
    state = tmp_path / "state"
    state.mkdir()
    script = (f"mount -t tmpfs -o size=2m,mode=0700 tmpfs {state} && "
              f"exec {sys.executable} -m tests.storage_full_child {state} {mode}")
    done = subprocess.run(["unshare", "-rm", "sh", "-c", script], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


@pytest.mark.parametrize("mode", ["full", "read-only"])
def test_a_full_or_read_only_state_directory_is_said_and_the_pins_keep_working(
        tmp_path: Path, mode: str) -> None:
    got = run_on_tmpfs(tmp_path, mode)
    assert got["level_after_write"] == 1  # the switch happened
    assert got["level_after_timer"] == 0  # and max_on_seconds still ended it
    broken = got["while_broken"]
    assert isinstance(broken, dict)
    assert broken["state"] == mode and broken["since"]
    assert broken["audit_missing"] >= 2  # the switch and its auto-off were not recorded
    reply = str(got["reply"])
    assert f"the disk is {mode}" in reply and "Error" not in reply and "OSError" not in reply
    told = got["told"]
    assert isinstance(told, list) and len(told) == 2, told  # once when it broke, once recovered
    assert f"The state directory is {mode}" in told[0]
    assert "takes writes again" in told[1] and "audit records were not kept" in told[1]
    assert got["after"] == {**broken, "state": "ok", "since": None, "path": None}
    assert got["rows"][0] == ["write", 1.0] and got["rows"][-1][0] in ("write", "safe-state")
