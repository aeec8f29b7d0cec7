"""A slow set-up's lines reach the terminal while pytest captures the test's own output: a pytest
session in a subprocess runs a fake set-up with a short tick, and its stdout is read."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests import setup_progress
from tests.helpers import ROOT

FAKE_SET_UPS = '''
import fcntl
import threading

from tests import setup_progress
from tests.setup_progress import setting_up


def test_a_fake_toolchain(tmp_path):
    print("the test's own output")
    two_ticks = threading.Event()
    fetched = []

    def progress():
        fetched.append(1)
        if len(fetched) == 2:
            two_ticks.set()
        return f"{len(fetched)} files fetched"

    with setting_up("a fake toolchain", cached_in=tmp_path / "toolchain", takes="about a second",
                    interval=0.05) as step:
        step.progress = progress
        step.say("step 1/2: fetching")
        assert two_ticks.wait(30)


def test_another_runs_lock(tmp_path, monkeypatch):
    held = (tmp_path / "lock").open("w")
    fcntl.flock(held, fcntl.LOCK_EX)  # another test run, building the cache
    announced = threading.Event()
    say = setup_progress.say
    monkeypatch.setattr(setup_progress, "say", lambda line: (say(line), announced.set()))
    with (tmp_path / "lock").open("w") as lock:
        waiter = threading.Thread(target=setup_progress.wait_for_lock, args=(lock, "a fake cache"))
        waiter.start()
        assert announced.wait(30)
        held.close()  # the other run is done
        waiter.join()


def test_a_broken_mirror(tmp_path):
    with setting_up("a broken mirror", cached_in=None, interval=60):
        raise RuntimeError("mirror unreachable: check the proxy\\nthe rest of the log")
'''


def run_pytest(directory: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "tests.setup_progress",
                           "-p", "no:cacheprovider", "-q", *args], cwd=directory, env=env,
                          capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    directory = tmp_path_factory.mktemp("fake-set-ups")
    (directory / "test_fake_set_ups.py").write_text(FAKE_SET_UPS)
    run = run_pytest(directory, "--basetemp", str(directory / "tmp"))
    assert "1 failed, 2 passed" in run.stdout, run.stdout + run.stderr
    assert "setting up" not in run.stderr, run.stderr
    return run.stdout, directory / "tmp"


TIME = r"(?:\d+m\d\d|\d{1,2})s"
"""An elapsed time as the lines write it (a loaded machine may take more than 0s)."""


def lines_in_order(stdout: str, *patterns: str) -> bool:
    """Each pattern matches a whole line of ``stdout``, in this order."""
    position = 0
    for pattern in patterns:
        found = re.compile(rf"^{pattern}$", re.M).search(stdout, position)
        if found is None:
            return False
        position = found.end()
    return True


def test_a_set_up_says_what_where_how_far_and_how_long_under_capture(session):
    stdout, basetemp = session
    cache = setup_progress.shown(basetemp / "test_a_fake_toolchain0" / "toolchain")
    assert lines_in_order(
        stdout,
        re.escape(f"setting up a fake toolchain (about a second; cached in {cache} for next time)"),
        rf"setting up a fake toolchain: step 1/2: fetching \({TIME}\)",
        rf"still setting up a fake toolchain: {TIME}, step 1/2: fetching, 1 files fetched",
        rf"still setting up a fake toolchain: {TIME}, step 1/2: fetching, 2 files fetched",
        rf"set up a fake toolchain in {TIME}"), stdout
    assert "the test's own output" not in stdout  # the test's output stayed captured


def test_a_failing_set_up_says_it_failed_and_the_error_goes_on(session):
    stdout, _ = session
    assert lines_in_order(
        stdout, "setting up a broken mirror",
        rf"setting up a broken mirror failed after {TIME}: RuntimeError: mirror unreachable: "
        "check the proxy"), stdout
    assert "FAILED test_fake_set_ups.py::test_a_broken_mirror - RuntimeError" in stdout


def test_elapsed_times_read_as_minutes_and_seconds():
    assert [setup_progress.elapsed(s) for s in (0.4, 42, 150, 4265)] == \
        ["0s", "42s", "2m30s", "71m05s"]


def test_waiting_for_another_runs_build_says_so(session):
    stdout, basetemp = session
    lock = setup_progress.shown(basetemp / "test_another_runs_lock0" / "lock")
    waiting = re.escape(f"a fake cache (waiting for another test run, which holds {lock})")
    assert lines_in_order(stdout, f"setting up {waiting}", f"set up {waiting} in {TIME}"), stdout


def test_outside_pytest_the_lines_go_to_stderr():
    script = ("from tests.setup_progress import setting_up\n"
              "with setting_up('a script', cached_in=None) as step:\n"
              "    step.say('one step')\n")
    run = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True,
                         text=True, timeout=60)
    assert run.stderr.splitlines() == ["setting up a script", "setting up a script: one step (0s)",
                                       "set up a script in 0s"], run.stderr


def test_this_session_writes_through_its_own_terminal(pytestconfig):
    assert setup_progress._config is pytestconfig  # tests/conftest.py loads the plugin
