"""The code compiled from text as modules load, kept between runs of edge-cli
(edge.core.code_cache): classes made from kept code are the classes the stock ``dataclasses``
makes, and forward references evaluate as stock ``typing``'s do; a second run compiles
nothing and writes nothing; a file that is not this user's own, broken or another Python's is
never run; what was used before the agent was ready is let go."""

from __future__ import annotations

import dataclasses
import marshal
import os
import subprocess
import sys
import typing
from typing import Any, ClassVar

import pytest

from edge.core import code_cache
from edge.core.code_cache import FORMAT, CodeTable
from edge.core.paths import cache_dir
from tests.helpers import ROOT, cli


def make_classes() -> list[type]:
    """Dataclasses of every kind the module writes methods for."""

    @dataclasses.dataclass(frozen=True)
    class Frozen:
        name: str
        level: float = 0.5
        tags: tuple[str, ...] = ()

    @dataclasses.dataclass(order=True)
    class Ordered:
        rank: int
        items: list[int] = dataclasses.field(default_factory=list)
        seen: ClassVar[int] = 0

    @dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
    class Slotted:
        pin: str
        on: bool = False

    @dataclasses.dataclass(unsafe_hash=True)
    class Hashed:
        a: int
        b: str = dataclasses.field(default="x", compare=False)

        def __post_init__(self) -> None:
            self.a = abs(self.a)

    return [Frozen, Ordered, Slotted, Hashed]


METHODS = ("__init__", "__repr__", "__eq__", "__lt__", "__le__", "__gt__", "__ge__", "__setattr__",
           "__delattr__", "__hash__")


def code_of(cls: type) -> dict[str, tuple[Any, ...]]:
    found = {}
    for name in METHODS:
        function = cls.__dict__.get(name)
        if function is None or not hasattr(function, "__code__"):
            found[name] = (repr(function),)
            continue
        code = function.__code__
        found[name] = (code.co_code, code.co_consts, code.co_names, code.co_varnames,
                       code.co_qualname, function.__defaults__, function.__kwdefaults__,
                       tuple(function.__annotations__))
    return found


@pytest.fixture
def table(monkeypatch, tmp_path):
    """A table standing in for the builtin in ``dataclasses`` for one test."""

    def install(path=tmp_path / "cache" / "code-run.marshal") -> CodeTable:
        made = CodeTable(str(path))
        monkeypatch.setattr(dataclasses, "exec", made.exec, raising=False)
        return made

    return install


def behaviour(classes: list[type]) -> list[Any]:
    frozen, ordered, slotted, hashed = classes
    f = frozen("fan", tags=("a",))
    with pytest.raises(dataclasses.FrozenInstanceError):
        f.name = "pump"  # type: ignore[misc]
    s = slotted(pin="GPIO17")
    return [repr(f), f == frozen("fan", 0.5, ("a",)), hash(f) == hash(frozen("fan", tags=("a",))),
            repr(sorted([ordered(3), ordered(1, [2])])), ordered(1) < ordered(2), repr(s),
            hasattr(s, "__dict__"), hashed(-4, "y") == hashed(4, "z"), hash(hashed(-4)) == hash(hashed(4))]


def test_classes_made_from_kept_code_are_the_stock_ones(table, monkeypatch):
    stock = make_classes()
    cold = table()
    made_cold = make_classes()
    assert cold.compiled >= 20
    cold.save()
    warm = table()
    made_warm = make_classes()
    assert warm.compiled == 0 and warm.codes  # every text came from the file
    for ours, kept, theirs in zip(made_cold, made_warm, stock, strict=True):
        assert code_of(ours) == code_of(theirs) == code_of(kept)
    assert behaviour(made_warm) == behaviour(stock) == behaviour(made_cold)


def test_forward_references_from_kept_code_evaluate_as_typings_do(monkeypatch, tmp_path):
    path = tmp_path / "cache" / "code-run.marshal"
    annotated = type("Annotated", (), {"__annotations__": {
        "pins": "dict[str, list[int]] | None", "name": "str", "level": "float"}})
    stock = typing.get_type_hints(annotated)
    for run in ("cold", "warm"):
        made = CodeTable(str(path))
        monkeypatch.setattr(typing, "compile", made.compile, raising=False)
        assert typing.get_type_hints(annotated) == stock == {
            "pins": dict[str, list[int]] | None, "name": str, "level": float}
        with pytest.raises(SyntaxError, match="Forward reference must be an expression"):
            typing.ForwardRef("not an expression")
        assert made.compiled == (3 if run == "cold" else 0)
        made.save()
    assert compile("1 + 1", "<x>", "eval") and made.compile("x = 1", "<string>", "exec").co_name == "<module>"


def test_a_second_run_writes_nothing(table, tmp_path):
    first = table()
    make_classes()
    first.save()
    path = tmp_path / "cache" / "code-run.marshal"
    written = path.stat().st_mtime_ns
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    assert oct(path.parent.stat().st_mode & 0o777) == "0o700"
    second = table()
    make_classes()
    second.settle()
    second.save()
    assert path.stat().st_mtime_ns == written and second.compiled == 0


def plant(table, tmp_path):
    """A file mapping every text ``make_classes`` compiles to code that leaves a marker file
    behind; (its path, the marker, how many texts)."""
    recorder = table()
    make_classes()
    assert recorder.codes is not None
    marker = tmp_path / "ran"
    evil = compile(f"open({str(marker)!r}, 'w').close()\ndef __create_fn__(*a, **k):\n return None",
                   "<string>", "exec")
    path = tmp_path / "planted" / "code-run.marshal"
    path.parent.mkdir()
    path.write_bytes(marshal.dumps((FORMAT, dict.fromkeys(recorder.codes, evil))))
    return path, marker, len(recorder.codes)


@pytest.mark.parametrize("how", ["writable by the group", "writable by anyone", "another owner"])
def test_a_file_others_could_have_written_is_never_run(table, tmp_path, how, monkeypatch):
    path, marker, texts = plant(table, tmp_path)
    if how == "writable by the group":
        path.chmod(0o620)
    elif how == "writable by anyone":
        path.chmod(0o602)
    else:
        path.chmod(0o600)
        monkeypatch.setattr(os, "getuid", lambda: os.stat(path).st_uid + 1)
    made = table(path)
    assert len(behaviour(make_classes())) == 9
    assert not marker.exists() and made.compiled == texts


def test_the_same_file_when_ours_is_run(table, tmp_path):
    """The planted file of the test above, owned by this user and private: its code runs (so
    that test's refusal is what kept it out)."""
    path, marker, texts = plant(table, tmp_path)
    path.chmod(0o600)
    table(path)
    with pytest.raises(AttributeError):  # the plant's __create_fn__ gave back None, not a method
        make_classes()
    assert marker.exists()


@pytest.mark.parametrize("content", [b"", b"not marshal at all", marshal.dumps(["a list"]),
                                     marshal.dumps(((0x30a00f0, 1), {"x": 1})),
                                     marshal.dumps((FORMAT, "not a dict"))])
def test_a_broken_or_foreign_file_is_replaced(table, tmp_path, content):
    path = tmp_path / "cache" / "code-run.marshal"
    path.parent.mkdir(mode=0o700)
    path.write_bytes(content)
    path.chmod(0o600)
    made = table(path)
    stock = behaviour(make_classes())
    assert made.compiled >= 20
    made.save()
    stored = marshal.loads(path.read_bytes())
    assert stored[0] == FORMAT and made.codes is not None and stored[1].keys() == made.codes.keys()
    assert stock == behaviour(make_classes())


def test_what_was_used_before_ready_is_let_go_and_not_written_again(table, tmp_path):
    path = tmp_path / "cache" / "code-run.marshal"
    first = table(path)
    make_classes()
    first.settle()  # ready: written, then let go
    assert first.codes == {} and path.exists()
    written, before = path.stat().st_mtime_ns, len(marshal.loads(path.read_bytes())[1])
    make_classes()  # the same texts again after ready: compiled, not counted as new
    assert first.compiled == 0
    first.settle()
    assert path.stat().st_mtime_ns == written

    @dataclasses.dataclass
    class Later:  # a text first met after ready is new, and merged into the file at the end
        late: int

    assert first.compiled == 3
    first.settle()
    stored = marshal.loads(path.read_bytes())[1]
    assert len(stored) == before + 3 and any("late" in text for text in stored)


def test_a_file_never_holds_more_than_the_bound(table, tmp_path, monkeypatch):
    monkeypatch.setattr(code_cache, "MAX_TEXTS", 25)
    path = tmp_path / "cache" / "code-run.marshal"
    path.parent.mkdir(mode=0o700)
    stale = {f"# text {n}": compile("pass", "<string>", "exec") for n in range(30)}
    path.write_bytes(marshal.dumps((FORMAT, stale)))
    path.chmod(0o600)
    made = table(path)
    make_classes()
    made.save()
    stored = marshal.loads(path.read_bytes())[1]
    assert len(stored) <= 25 and not set(stale) & set(stored) and made.compiled == 0


def test_an_unwritable_cache_is_a_slower_start_not_a_failure(table, tmp_path):
    blocked = tmp_path / "file-not-dir"
    blocked.write_text("")
    made = table(blocked / "code-run.marshal")
    assert behaviour(make_classes()) == behaviour(make_classes())
    made.settle()
    assert made.compiled > 0  # still new: nothing could be written


def test_the_cache_directory_follows_systemd_then_xdg():
    assert str(cache_dir({"CACHE_DIRECTORY": "/var/cache/edge-agent"})) == "/var/cache/edge-agent"
    assert str(cache_dir({"XDG_CACHE_HOME": "/x"})) == "/x/edge-agent"


def test_edge_cli_keeps_a_file_per_command_and_rewrites_it_only_when_new(isolated_env, tmp_path):
    cache = tmp_path / "xdg-cache"
    env = {**isolated_env, "XDG_CACHE_HOME": str(cache)}
    version = cli("--version", env=env)
    assert version.returncode == 0 and not cache.exists()  # --version makes no dataclass
    first = cli("config", "show", env=env)
    assert first.returncode == 0, first.stderr
    kept = cache / "edge-agent" / "code-config.marshal"
    written = kept.stat().st_mtime_ns
    assert len(marshal.loads(kept.read_bytes())[1]) > 100
    again = cli("config", "show", env=env)
    assert again.returncode == 0 and again.stdout == first.stdout
    assert kept.stat().st_mtime_ns == written
    turn = cli("run", env=env, stdin="/pins\n")
    assert turn.returncode == 0, turn.stderr
    assert (cache / "edge-agent" / "code-run.marshal").exists()
    assert sorted(p.name for p in (cache / "edge-agent").iterdir()) == [
        "code-config.marshal", "code-run.marshal"]


def test_the_stand_ins_arrive_with_the_modules_and_not_before(tmp_path):
    """A command that does not import dataclasses (status through the socket) does not pay for
    it; it gets its stand-in when imported."""
    script = """
import sys
from edge.core import code_cache
table = code_cache.install("probe", {"XDG_CACHE_HOME": sys.argv[1]})
assert "dataclasses" not in sys.modules, "imported too early"
import typing  # already imported (by code_cache itself): given its stand-in at once
assert typing.compile == table.compile and any(isinstance(f, code_cache.WhenImported) for f in sys.meta_path)
import dataclasses
assert dataclasses.exec == table.exec and not any(isinstance(f, code_cache.WhenImported) for f in sys.meta_path)
@dataclasses.dataclass(frozen=True)
class Probe:
    x: int
assert Probe(1) == Probe(1) and table.compiled > 0
table.settle()
print(sorted(table.read())[0][:17])
"""
    done = subprocess.run([sys.executable, "-S", "-c", script, str(tmp_path)], capture_output=True,
                          text=True, cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": os.environ["PATH"]})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "def __create_fn__"
    assert (tmp_path / "edge-agent" / "code-probe.marshal").exists()
