"""The soak, five minutes of it: the same real agent, surroundings, outages and checks as
``python -m bench soak``, at a twelfth of the hour's work. Growth is measured quiet after a
warm-up (a minute and a half of work here: the agent's rate windows and hygiene turn once) against
quiet at the end (fds, threads and tasks given time to settle): bounds on what the agent holds,
not on how fast it is. Every file under the state directory is held to its own bound."""

from __future__ import annotations

import pytest

from bench.bench_soak import drive, print_report

pytestmark = pytest.mark.emulator

SCALE = 300 / 3600
"""Five minutes of the hour: 833 model turns, 8,333 input edges, 417 MQTT commands and 8 outages
each of the broker, the provider and the board, after the warm-up."""


def test_a_busy_stretch_leaves_memory_descriptors_threads_and_files_bounded(tmp_path):
    report = drive(SCALE, tmp_path)
    print_report(report)
    assert report.counts.edges and report.rule_firings, "no input edge reached the rules"
    assert report.counts.turns - report.counts.turns_unanswered > report.counts.turns // 2
    assert report.memories, "no conversation was kept in memory"
    assert report.failures() == []
