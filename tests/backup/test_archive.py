"""``edge-cli backup create|verify|restore`` on real files: what goes in with and without
``--secrets``, an archive altered in any way is refused (exit 2) and names what failed, a sealed
archive opens only with its passphrase, and a restored database never meets a stale journal."""

from __future__ import annotations

import gzip
import io
import json
import os
import sqlite3
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest

from edge.backup import sealing
from edge.backup.archive import create_backup, unpack
from edge.core.exc import EdgeError
from tests.helpers import cli

CONFIG = '[boards.gpio.pins]\nled = { mode = "output", safe = "off" }\n'


def database(path: Path, rows: int = 50) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("CREATE TABLE IF NOT EXISTS log (n INTEGER, text TEXT)")
    db.executemany("INSERT INTO log VALUES (?, ?)", [(i, f"row {i} " * 20) for i in range(rows)])
    db.commit()
    db.close()


def rows(path: Path) -> int:
    db = sqlite3.connect(path)
    try:
        return int(db.execute("SELECT count(*) FROM log").fetchone()[0])
    finally:
        db.close()


@pytest.fixture
def setup(isolated_env: dict[str, str], write_config: Any, tmp_path: Path) -> dict[str, Any]:
    state = tmp_path / "state"
    database(state / "audit.db")
    database(state / "memory" / "brain.db", rows=5)
    (state / "schedules.json").write_text('{"jobs": []}')
    (state / "fleet-keys.json").write_text('{"shed": "secret-key"}')
    (state / "pairing.json").write_text('{"telegram": []}')
    (state / "sessions").mkdir()
    (state / "sessions" / "abc.jsonl").write_text('{"role": "user", "content": "hi"}\n')
    (state / "control.sock").write_text("")  # left out: the running agent's socket
    env_file = tmp_path / "env"
    env_file.write_text("EDGE_PROVIDER__API_KEY=sk-secret\n")
    env = {**isolated_env, "EDGE_CONFIG": str(write_config(CONFIG))}
    return {"env": env, "state": state, "env_file": env_file, "tmp": tmp_path}


def create(setup: dict[str, Any], *extra: str, name: str = "b.tar.gz") -> dict[str, Any]:
    path = setup["tmp"] / name
    out = cli("backup", "create", str(path), "--env-file", str(setup["env_file"]), *extra,
              "--json", env=setup["env"])
    assert out.returncode == 0, out.stderr + out.stdout
    made: dict[str, Any] = json.loads(out.stdout)["data"]
    assert Path(made["path"]) == path and path.stat().st_mode & 0o777 == 0o600
    return made


def test_secrets_only_with_the_flag(setup: dict[str, Any]) -> None:
    plain = create(setup)
    assert plain["files"] == ["config/config.toml", "state/audit.db", "state/memory/brain.db",
                              "state/schedules.json"]
    assert plain["secrets"] is False
    archive = (setup["tmp"] / "b.tar.gz").read_bytes()
    assert b"secret-key" not in gzip.decompress(archive) and b"sk-secret" not in gzip.decompress(archive)
    full = create(setup, "--secrets", name="s.tar.gz")
    assert set(full["files"]) - set(plain["files"]) == {
        "config/env", "state/fleet-keys.json", "state/pairing.json", "state/sessions/abc.jsonl"}


def test_verify_checks_every_hash_and_database(setup: dict[str, Any]) -> None:
    create(setup)
    good = cli("backup", "verify", str(setup["tmp"] / "b.tar.gz"), "--json", env=setup["env"])
    assert good.returncode == 0 and json.loads(good.stdout)["data"]["host"]


def rewrite(source: Path, target: Path, change: Any) -> None:
    """``source``'s members, each passed through ``change(name, bytes)`` (None drops it)."""
    out = io.BytesIO()
    with tarfile.open(source, "r:gz") as old, tarfile.open(fileobj=out, mode="w:gz") as new:
        for info in old:
            handle = old.extractfile(info)
            assert handle is not None
            data = change(info.name, handle.read())
            if data is None:
                continue
            info.size = len(data)
            new.addfile(info, io.BytesIO(data))
    target.write_bytes(out.getvalue())


def manifest_with(data: bytes, name: str, content: bytes) -> bytes:
    """The manifest, saying ``name`` is ``content`` (a forger who also fixed the hash)."""
    import hashlib

    manifest = json.loads(data)
    for entry in manifest["files"]:
        if entry["path"] == name:
            entry["size"], entry["sha256"] = len(content), hashlib.sha256(content).hexdigest()
    return json.dumps(manifest).encode()


def corrupt(db: bytes) -> bytes:
    page = 4096
    return db[:page] + b"\xff" * 64 + db[page + 64:]  # the first table page's header, scrawled on


@pytest.mark.parametrize(("how", "error"), [
    ("a byte of a member", "state/schedules.json does not match its manifest"),
    ("a member dropped", "lacks state/schedules.json"),
    ("a member added", "evil.sh is not in its manifest"),
    ("a damaged database, its hash forged", "state/audit.db fails SQLite's integrity check"),
    ("the gzip cut short", "is damaged"),
    ("not an archive at all", "is not a backup archive"),
])
def test_verify_refuses_an_altered_archive_with_exit_2(setup: dict[str, Any], how: str, error: str) -> None:
    create(setup)
    source, bad = setup["tmp"] / "b.tar.gz", setup["tmp"] / "bad.tar.gz"
    audit = (setup["state"] / "audit.db")
    if how == "a byte of a member":
        rewrite(source, bad, lambda n, d: d.replace(b"jobs", b"JOBS") if n == "state/schedules.json" else d)
    elif how == "a member dropped":
        rewrite(source, bad, lambda n, d: None if n == "state/schedules.json" else d)
    elif how == "a member added":
        rewrite(source, bad, lambda n, d: d)
        with tarfile.open(bad, "r:gz") as old:
            members = [(i, old.extractfile(i).read()) for i in old]  # type: ignore[union-attr]
        with tarfile.open(bad, "w:gz") as new:
            for info, data in [*members, (tarfile.TarInfo("evil.sh"), b"rm -rf /")]:
                info.size = len(data)
                new.addfile(info, io.BytesIO(data))
    elif how == "a damaged database, its hash forged":
        with tarfile.open(source, "r:gz") as old:
            copy = old.extractfile("state/audit.db").read()  # type: ignore[union-attr]
        assert audit.is_file() and len(copy) > 8192
        rewrite(source, bad, lambda n, d: (corrupt(d) if n == "state/audit.db" else
                                           manifest_with(d, "state/audit.db", corrupt(copy))
                                           if n == "manifest.json" else d))
    elif how == "the gzip cut short":
        bad.write_bytes(source.read_bytes()[:-200])
    else:
        bad.write_text("hello")
    out = cli("backup", "verify", str(bad), "--json", env=setup["env"])
    answer = json.loads(out.stdout)
    assert out.returncode == 2 and error in answer["error"], answer
    restored = cli("backup", "restore", str(bad), "--state-dir", str(setup["tmp"] / "new"),
                   "--config", str(setup["tmp"] / "new.toml"), env=setup["env"])
    assert restored.returncode == 2 and not (setup["tmp"] / "new.toml").exists()
    assert not (setup["tmp"] / "new" / "audit.db").exists()  # nothing written from a bad archive


def test_a_sealed_archive_opens_only_with_its_passphrase(setup: dict[str, Any]) -> None:
    phrase, wrong = setup["tmp"] / "phrase", setup["tmp"] / "wrong"
    phrase.write_text("correct horse battery staple\n")
    wrong.write_text("correct horse\n")
    create(setup, "--secrets", "--passphrase-file", str(phrase))
    path = str(setup["tmp"] / "b.tar.gz")
    assert b"sk-secret" not in Path(path).read_bytes()
    unsealed = cli("backup", "verify", path, "--json", env=setup["env"])
    assert unsealed.returncode == 2 and "--passphrase-file" in json.loads(unsealed.stdout)["error"]
    refused = cli("backup", "verify", path, "--passphrase-file", str(wrong), "--json", env=setup["env"])
    assert refused.returncode == 2
    assert json.loads(refused.stdout)["error"] == ("the passphrase does not open this archive, or "
                                                   "the archive was altered")
    by_variable = {**setup["env"], "EDGE_BACKUP__PASSPHRASE": "correct horse battery staple"}
    assert cli("backup", "verify", path, env=by_variable).returncode == 0
    target = setup["tmp"] / "new"
    restored = cli("backup", "restore", path, "--passphrase-file", "-", "--state-dir", str(target),
                   "--config", str(setup["tmp"] / "new.toml"), "--env-file", str(setup["tmp"] / "env2"),
                   env=setup["env"], stdin="correct horse battery staple\n")
    assert restored.returncode == 0, restored.stderr
    assert rows(target / "audit.db") == 50 and (target / "fleet-keys.json").read_text() == '{"shed": "secret-key"}'
    assert (setup["tmp"] / "env2").read_text() == "EDGE_PROVIDER__API_KEY=sk-secret\n"
    assert (setup["tmp"] / "env2").stat().st_mode & 0o777 == setup["env_file"].stat().st_mode & 0o777


def test_without_cryptography_sealing_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "cryptography.fernet", None)
    with pytest.raises(EdgeError, match="python3-cryptography"):
        sealing.seal_file(Path(__file__), Path(__file__).with_name("never"), "phrase")


def test_a_restored_database_replaces_a_stale_journal_beside_it(setup: dict[str, Any]) -> None:
    state, archive = setup["state"], setup["tmp"] / "b.tar.gz"
    create_backup(archive, state_dir=state, config=None, env_file=None)
    database(state / "audit.db", rows=7)  # after the backup: 57 rows, the last 7 maybe in the WAL
    db = sqlite3.connect(state / "audit.db")  # hold it open so the WAL stays beside it
    db.execute("PRAGMA wal_autocheckpoint = 0")
    db.execute("INSERT INTO log VALUES (999, 'after')")
    db.commit()
    wal = Path(f"{state / 'audit.db'}-wal")
    assert wal.is_file() and wal.stat().st_size > 0
    stale = wal.read_bytes()
    db.close()
    wal.write_bytes(stale)  # as a power cut would leave it
    out = cli("backup", "restore", str(archive), "--state-dir", str(state), env=setup["env"])
    assert out.returncode == 0, out.stderr
    assert not wal.exists() and rows(state / "audit.db") == 50


def test_unpack_rejects_a_member_that_points_outside(tmp_path: Path) -> None:
    bad = tmp_path / "bad.tar.gz"
    manifest = {"format": 1, "version": "0", "created": "", "host": "h", "secrets": False,
                "state_dir": "/s", "config": None, "env_file": None,
                "files": [{"path": "../escape", "kind": "file", "size": 1, "sha256": "0", "mode": 384}]}
    with tarfile.open(bad, "w:gz") as tar:
        for name, data in (("manifest.json", json.dumps(manifest).encode()), ("../escape", b"x")):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    from edge.backup.archive import BackupInvalid

    with pytest.raises(BackupInvalid, match="points outside"):
        unpack(bad, tmp_path / "into")
    assert not (tmp_path / "escape").exists()


def test_restored_state_takes_the_state_directorys_owner(setup: dict[str, Any]) -> None:
    """Run as root (``sudo edge-cli backup restore``), restored state files and the folders made
    for them belong to the state directory's owner (``edge``), not root; as a user, to that user."""
    archive, target = setup["tmp"] / "b.tar.gz", setup["tmp"] / "service-state"
    create_backup(archive, state_dir=setup["state"], config=None, env_file=None)
    target.mkdir()
    owner = (4242, 4343) if os.geteuid() == 0 else (os.getuid(), os.getgid())
    if os.geteuid() == 0:
        os.chown(target, *owner)
    out = cli("backup", "restore", str(archive), "--state-dir", str(target), env=setup["env"])
    assert out.returncode == 0, out.stderr
    for path in (target / "audit.db", target / "memory", target / "memory" / "brain.db"):
        assert (path.stat().st_uid, path.stat().st_gid) == owner, path
    assert (target / "memory").stat().st_mode & 0o777 == 0o700
