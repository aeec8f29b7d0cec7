"""Eight voice notes of 25 MB at once stay within 30 MB of the agent's idle RSS (issue 37): they
are fetched into files and uploaded from them, two at a time across the agent, and no file is
left behind (the figure: ``python -m bench voice``)."""

from __future__ import annotations

from tests.channels.voice_load import NOTE_BYTES, PEOPLE, measure

BOUND_KIB = 30 * 1024


def test_eight_notes_of_25_mb_at_once_stay_within_30_mb_of_idle(tmp_path, record_property):
    load = measure(tmp_path)
    record_property("voice_notes_rss_added_kib", load.added_kib)
    assert load.uploaded == [1004] + [NOTE_BYTES] * len(PEOPLE)  # every note, whole
    assert load.most_uploads_at_once <= 2
    assert load.leftovers == []
    assert load.peak_kib <= load.idle_kib + BOUND_KIB, (load.idle_kib, load.peak_kib)
