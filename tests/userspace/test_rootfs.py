"""The userspace's own upkeep, without building one: its ``/tmp`` is aged at each session's
start, so the cache does not grow with every run."""

from __future__ import annotations

import os

from tests.userspace.rootfs import TMP_KEPT_SECONDS, _clear_old_tmp


def test_a_session_start_removes_what_in_tmp_is_older_than_an_hour_and_keeps_the_rest(tmp_path):
    tmp = tmp_path / "root" / "tmp"
    (tmp / "pip-unpack-old" / "deep").mkdir(parents=True)
    (tmp / "pip-unpack-old" / "deep" / "wheel.whl").write_bytes(b"x" * 1000)
    (tmp / "tmpold-state" / "models").mkdir(parents=True)
    (tmp / "old-file").write_text("left by an earlier run")
    (tmp / "tmpfresh-state").mkdir()  # another checkout's session, running now
    (tmp / "fresh-file").write_text("in use")
    (tmp / "old-link").symlink_to(tmp_path / "outside")  # never followed
    now = 2_000_000_000.0
    for name in ("pip-unpack-old", "tmpold-state", "old-file", "old-link"):
        os.utime(tmp / name, (now - TMP_KEPT_SECONDS - 60,) * 2, follow_symlinks=False)
    for name in ("tmpfresh-state", "fresh-file"):
        os.utime(tmp / name, (now - 60,) * 2)

    removed = _clear_old_tmp(tmp_path / "root", now=now)

    assert sorted(removed) == ["old-file", "old-link", "pip-unpack-old", "tmpold-state"]
    assert sorted(p.name for p in tmp.iterdir()) == ["fresh-file", "tmpfresh-state"]


def test_a_userspace_without_tmp_is_left_as_it_is(tmp_path):
    assert _clear_old_tmp(tmp_path) == []
