"""The soak, five minutes of it: the same real agent, surroundings, outages and checks as
``python -m bench soak``, at a twelfth of the hour's work. Growth is measured quiet after a
warm-up against quiet at the end (fds, threads and tasks given time to settle): bounds on what the
agent holds, not on how fast it is."""

from __future__ import annotations

import pytest

from bench.bench_soak import drive, print_report

pytestmark = pytest.mark.emulator

SCALE = 300 / 3600
"""Five minutes of the hour: 833 model turns, 8,333 input edges, 417 MQTT commands and 8 outages
each of the broker, the provider and the board."""


@pytest.mark.xfail(strict=True, reason="the agent misses the soak's targets today: over five minutes "
                   "after warm-up its RSS grew 18.4 MB (125.2 -> 143.7 MB; target < 3 MB), descriptors "
                   "26 -> 27 and threads 11 -> 12; strict: when it passes, this mark must go")
def test_a_busy_stretch_leaves_memory_descriptors_threads_and_files_bounded(tmp_path):
    report = drive(SCALE, tmp_path)
    print_report(report)
    assert report.counts.edges and report.rule_firings, "no input edge reached the rules"
    assert report.counts.turns - report.counts.turns_unanswered > report.counts.turns // 2
    assert report.failures() == []
