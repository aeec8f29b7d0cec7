"""edge.core.files: atomic replacement that never leaves a half-written file or a stray temp file."""

from __future__ import annotations

import pytest

from edge.core.files import write_atomically, write_json_atomically


def test_replaces_content_and_mode(tmp_path):
    target = tmp_path / "sub" / "config.toml"
    write_atomically(target, "a = 1\n", 0o640)
    write_atomically(target, b"a = 2\n", 0o640)
    assert target.read_text() == "a = 2\n" and target.stat().st_mode & 0o777 == 0o640
    assert [p.name for p in target.parent.iterdir()] == ["config.toml"]


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temp_file(tmp_path):
    target = tmp_path / "state.json"
    write_json_atomically(target, {"v": 1})
    with pytest.raises(TypeError):
        write_json_atomically(target, {"v": object()})  # not serialisable: fails before writing
    (tmp_path / "dir").mkdir()
    with pytest.raises(OSError):
        write_atomically(tmp_path / "dir", "x")  # rename over a directory fails after writing
    assert target.read_text() == '{\n "v": 1\n}'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dir", "state.json"]


def test_a_write_made_durable_later_is_visible_at_once(tmp_path, monkeypatch):
    from edge.core import files

    synced = []
    monkeypatch.setattr(files.os, "fsync", lambda fd: synced.append(fd))
    target = tmp_path / "offset"
    files.write_atomically(target, "101", durable=False)
    assert target.read_text() == "101" and synced == []  # no fsync on the hot path
    files.make_durable(target)
    assert len(synced) == 2  # the file, then the directory holding the rename
