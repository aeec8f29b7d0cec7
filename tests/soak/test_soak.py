"""The soak, five minutes of it: the same real agent, surroundings, outages and checks as
``python -m bench soak``, at a twelfth of the hour's work. Growth is measured quiet after a
warm-up against quiet at the end (fds, threads and tasks given time to settle): bounds on what the
agent holds, not on how fast it is."""

from __future__ import annotations

from bench.bench_soak import drive, print_report

SCALE = 300 / 3600
"""Five minutes of the hour: 833 model turns, 8,333 input edges, 417 MQTT commands and 8 outages
each of the broker, the provider and the board."""


def test_a_busy_stretch_leaves_memory_descriptors_threads_and_files_bounded(tmp_path):
    report = drive(SCALE, tmp_path)
    print_report(report)
    assert report.counts.edges and report.rule_firings, "no input edge reached the rules"
    assert report.counts.turns - report.counts.turns_unanswered > report.counts.turns // 2
    assert report.failures() == []
