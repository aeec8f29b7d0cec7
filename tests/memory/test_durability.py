"""Every SQLite file the project writes keeps every acknowledged write of the agent and of the
CLI working beside it (issue 23).

On Linux, closing *any* descriptor of a file drops every POSIX lock the process holds on it
(SQLite's "How To Corrupt", 2.2). An agent that once opened and closed ``brain.db`` beside its
live connection lost its lock; the next ``edge-cli memory`` to close believed it was the last,
checkpointed and unlinked the WAL, and from then on the agent committed into a deleted ``-wal``:
a SIGKILL lost those writes, a clean stop checkpointed them over the CLI's.

``SQLITE_FILES`` lists every SQLite file the project writes, with how the agent and the CLI each
write a row to it; every test here runs for each. A new store is added to it, and
``test_every_module_that_opens_sqlite_is_known`` fails until it is.
"""

from __future__ import annotations

import ast
import errno
import json
import os
import selectors
import signal
import sqlite3
import stat
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

import pytest

from edge.readings.recorder import FLUSH_SECONDS
from tests.fakes.openai_server import OpenAIServer, completion
from tests.helpers import EDGE_CLI, ROOT, cli

SQLITE_HEADER = b"SQLite format 3\x00"


def deleted_files(pid: int | str) -> set[str]:
    """What the descriptors of process ``pid`` point at that is no longer in the file system."""
    found = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except FileNotFoundError:  # closed meanwhile (the descriptor listing the folder, say)
            continue
        if target.endswith(" (deleted)"):
            found.add(target)
    return found


class Agent:
    """``edge-cli run`` with the CLI channel on pipes; ``ask`` writes a line, returns the reply."""

    def __init__(self, env: dict[str, str]):
        self.env = env
        self.proc = subprocess.Popen([*EDGE_CLI, "run"], env=env, cwd=ROOT, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.proc.stdout, selectors.EVENT_READ)
        self.buffer = b""

    def ask(self, line: str, timeout: float = 20.0) -> str:
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"no reply; stderr: {self.proc.stderr.read1(65536)!r}"
            if self.selector.select(remaining):
                chunk = os.read(self.proc.stdout.fileno(), 65536)
                assert chunk, f"agent closed stdout; stderr: {self.proc.stderr.read1(65536)!r}"
                self.buffer += chunk
        reply, self.buffer = self.buffer.split(b"\n", 1)
        return reply.decode()

    def ask_more(self, timeout: float = 20.0) -> str:
        """The next line of the reply already asked for."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            remaining = deadline - time.monotonic()
            assert remaining > 0, "the reply ended early"
            if self.selector.select(remaining):
                chunk = os.read(self.proc.stdout.fileno(), 65536)
                assert chunk, "agent closed stdout"
                self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line.decode()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            stream.close()


def scripted_model(body: dict) -> tuple[int, dict]:
    """``remember <text>`` makes the model call memory_store, ``switch <pin>`` gpio_write; the
    tool's answer is the reply."""
    messages = body["messages"]
    if messages[-1]["role"] == "tool":
        return 200, completion("Done: " + messages[-1]["content"])
    text = next(m["content"] for m in reversed(messages) if m["role"] == "user")
    if text.startswith("remember "):
        fact = text.removeprefix("remember ")
        key = fact.replace(" ", "-")
        return 200, completion(None, [{"name": "memory_store",
                                       "arguments": {"key": key, "content": fact}}])
    if text.startswith("switch "):
        return 200, completion(None, [{"name": "gpio_write", "arguments": {
            "pin": text.removeprefix("switch "), "value": "on"}}])
    return 200, completion(f"echo: {text}")


# -- every SQLite file the project writes ----------------------------------------------------


def memory_by_agent(agent: Agent, marker: str) -> str | None:
    """The agent stores ``marker`` through its memory_store tool, and says so."""
    return marker if agent.ask(f"remember {marker}").startswith("Done: remembered") else None


def memory_by_cli(env: dict[str, str], marker: str) -> str | None:
    out = cli("memory", "store", marker.replace(" ", "-"), marker, env=env)
    assert out.returncode == 0, out.stderr
    return marker


def memory_rows(db: sqlite3.Connection) -> set[str]:
    return {content for (content,) in db.execute("SELECT content FROM memories")}


def audit_by_agent(agent: Agent, marker: str) -> str | None:
    """The model asks to switch a pin named ``marker``: refused (no such pin), and recorded."""
    done = agent.ask(f"switch {marker}").startswith("Done: ")
    receipt = [agent.ask_more(), agent.ask_more()]  # the agent's receipt ends the reply
    refused = receipt[0] == "" and receipt[1].startswith(f"Receipt: {marker}: refused")
    return marker if done and refused else None


def audit_by_cli(env: dict[str, str], marker: str) -> str | None:
    """``edge-cli gpio write`` beside the agent goes through it: refused, and recorded."""
    out = cli("gpio", "write", marker, "on", env=env)
    return marker if out.returncode != 0 and "pin" in out.stderr else None


def audit_rows(db: sqlite3.Connection) -> set[str]:
    return {pin for (pin,) in db.execute("SELECT pin FROM actuations")}


def newest_reading(env: dict[str, str]) -> str | None:
    """A reading taken from now on, once the agent's history holds it (the recorder writes every
    few seconds), as ``readings_rows`` names it."""
    now = time.time()
    deadline = time.monotonic() + 3 * FLUSH_SECONDS
    while time.monotonic() < deadline:
        out = cli("sensors", "history", "pi", "memory_used", "--since", "10m", "--json", env=env)
        assert out.returncode == 0, out.stderr
        answer = json.loads(out.stdout)  # "direct" while the agent is starting: not its word
        [series] = answer["data"]["series"] or [{"buckets": []}]
        if answer["via"] == "daemon" and series["buckets"] and series["buckets"][-1]["start"] >= now:
            return f"memory_used@{series['buckets'][-1]['start']!r}"
        time.sleep(0.2)
    return None


def readings_by_agent(agent: Agent, marker: str) -> str | None:
    """The agent records its Pi-health sensor on its own (readings are numbers: the text plays no
    part); a reading it reports holding is acknowledged."""
    return newest_reading(agent.env)


def readings_by_cli(env: dict[str, str], marker: str) -> str | None:
    """``edge-cli`` never writes the history: beside the agent it reads it through the agent
    (alone, it opens the file read-only); a reading it was shown is acknowledged."""
    return newest_reading(env)


def readings_rows(db: sqlite3.Connection) -> set[str]:
    rows = db.execute("SELECT q.quantity, r.at FROM raw r JOIN quantities q ON q.id = r.series")
    return {f"{quantity}@{at!r}" for quantity, at in rows}


@dataclass(frozen=True)
class SqliteFile:
    name: str
    path: str
    """Relative to the state directory."""
    by_agent: Callable[[Agent, str], str | None]
    """Have the running agent write a row (holding the text where rows hold text); the row as
    ``rows`` names it once the agent acknowledged it, else None."""
    by_cli: Callable[[dict[str, str], str], str | None]
    """The same with ``edge-cli`` beside the agent."""
    rows: Callable[[sqlite3.Connection], set[str]]
    """The rows the file holds, named."""
    in_process: Callable[[Path, str], Awaitable[str]]
    """Open the file at that path as the agent does, write a row (holding the text where rows
    hold text), close it; the row, named."""
    modules: tuple[str, ...]
    """The modules under edge/ and peripherals/ that connect to it."""


async def memory_in_process(path: Path, marker: str) -> str:
    from edge.memory.base import Category
    from edge.memory.embedders import NoopEmbedding
    from edge.memory.sqlite import SqliteMemory

    memory = SqliteMemory(path, NoopEmbedding())
    try:
        await memory.store(marker.replace(" ", "-"), marker, Category.CORE)
    finally:
        await memory.close()
    return marker


async def audit_in_process(path: Path, marker: str) -> str:
    from edge.audit import AuditTrail
    from edge.core.actuation import Actuation

    trail = AuditTrail(path)
    try:
        await trail.record(Actuation(at=time.time(), board="gpio", pin=marker, label=marker,
                                     action="write", asked=1.0))
    finally:
        trail.close()
    return marker


async def readings_in_process(path: Path, marker: str) -> str:
    from edge.readings.store import Entry, ReadingStore

    store = ReadingStore(path)
    at = time.time()
    try:
        await store.write([Entry(marker, "temperature", "°C", at, 21.5)])
    finally:
        await store.close()
    return f"temperature@{at!r}"


SQLITE_FILES = [
    SqliteFile("memory", "memory/brain.db", memory_by_agent, memory_by_cli, memory_rows,
               memory_in_process, ("edge/memory/sqlite_schema.py",)),
    SqliteFile("audit", "audit.db", audit_by_agent, audit_by_cli, audit_rows, audit_in_process,
               ("edge/audit.py",)),
    SqliteFile("readings", "readings.db", readings_by_agent, readings_by_cli, readings_rows,
               readings_in_process, ("edge/readings/store.py",)),
]

READ_ONLY_READERS = {"edge/status.py": "counts memories in any *.db, read-only",
                     "edge/backup/archive.py": "copies the stores read-only through SQLite's "
                                               "backup API into its own scratch copies, and "
                                               "checks an archive's copies"}
"""Modules that connect to SQLite files without writing them."""


# -- the interleaving --------------------------------------------------------------------------


@pytest.fixture
def model():
    with OpenAIServer(responder=scripted_model) as server:
        yield server


CONFIG = """
[sensors.pi]
type = "pi"
interval_seconds = 0.25
"""
"""A sensor the agent reads on any machine, so it writes its history beside the other files."""


@pytest.fixture
def env(isolated_env, model, write_config):
    return dict(isolated_env, EDGE_PROVIDER__BASE_URL=model.base_url,
                EDGE_PROVIDER__MODEL="scripted", EDGE_AGENT__DEBOUNCE_MS="0",
                EDGE_CONFIG=str(write_config(CONFIG)))


ROUNDS = 3


@pytest.mark.parametrize("stop", [signal.SIGKILL, signal.SIGTERM], ids=["sigkill", "sigterm"])
@pytest.mark.parametrize("store", SQLITE_FILES, ids=lambda s: s.name)
def test_agent_and_cli_interleaved_keep_every_acknowledged_write(store, stop, env, tmp_path):
    """The agent and ``edge-cli`` take turns writing (and the agent answers ``edge-cli status``,
    which opens the files beside its own connections), then the agent is killed (a power cut, as
    far as it is concerned) or stopped cleanly: every write either side acknowledged is in the
    file, and the agent never held a deleted ``-wal`` or ``-shm``."""
    state = tmp_path / "state"
    agent = Agent(env)
    acknowledged: list[str] = []
    deleted: set[str] = set()

    def write(marker: str, row: str | None) -> None:
        assert row is not None, f"{marker!r} was not acknowledged"
        acknowledged.append(row)
        deleted.update(f for f in deleted_files(agent.proc.pid) if f.startswith(str(state)))

    try:
        for i in range(ROUNDS):
            write(f"agent fact {i}", store.by_agent(agent, f"agent fact {i}"))
            write(f"cli fact {i}", store.by_cli(env, f"cli fact {i}"))
            status = cli("status", "--json", env=env)  # the agent reads *.db files itself
            assert json.loads(status.stdout)["via"] == "daemon", status.stderr
        write("agent fact last", store.by_agent(agent, "agent fact last"))
        agent.proc.send_signal(stop)
        assert agent.proc.wait(timeout=20) == (-stop if stop == signal.SIGKILL else 0)
    finally:
        agent.close()

    with closing(sqlite3.connect(state / store.path)) as db:
        missing = [m for m in acknowledged if m not in store.rows(db)]
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert not missing, f"acknowledged writes lost after {stop.name}: {missing}"
    assert not deleted, f"the agent held deleted files: {sorted(deleted)}"
    assert sqlite_files_in(state) <= {s.path for s in SQLITE_FILES}, \
        "the agent wrote a SQLite file missing from SQLITE_FILES"


def sqlite_files_in(state: Path) -> set[str]:
    """The SQLite databases under ``state``, relative to it (read once nothing holds them)."""
    found = set()
    for path in state.rglob("*"):
        if path.is_file():
            with path.open("rb") as file:
                if file.read(len(SQLITE_HEADER)) == SQLITE_HEADER:
                    found.add(str(path.relative_to(state)))
    return found


OTHER_PROCESS = """
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("SELECT COUNT(*) FROM sqlite_master").fetchall()
db.close()
"""


@pytest.mark.parametrize("store", SQLITE_FILES, ids=lambda s: s.name)
async def test_opening_beside_a_live_connection_keeps_its_locks(store, tmp_path):
    """Opening the file again in a process that holds a connection to it (a second store on the
    same file, the agent's own /status) leaves that connection's locks alone: otherwise another
    process closing afterwards takes itself for the last one and deletes the WAL under it."""
    path = tmp_path / store.path
    first = await store.in_process(path, "first fact")
    holder = sqlite3.connect(path)
    try:
        holder.execute("SELECT COUNT(*) FROM sqlite_master").fetchall()  # a reader, as the agent
        second = await store.in_process(path, "second fact")
        subprocess.run([sys.executable, "-c", OTHER_PROCESS, str(path)], check=True, timeout=30)
        deleted = {f for f in deleted_files("self") if f.startswith(str(path))}
        assert not deleted, f"another process deleted these under a live connection: {deleted}"
        assert {first, second} <= store.rows(holder)
    finally:
        holder.close()


@pytest.mark.parametrize("links", [True, False], ids=["hard-links", "no-hard-links"])
def test_prepare_makes_files_private_without_opening_an_existing_one(tmp_path, monkeypatch, links):
    from edge.core.sqlite_files import prepare_sqlite_file

    if not links:  # vfat: a new file is created under its name instead
        def no_link(*_):
            raise OSError(errno.EPERM, "Operation not permitted")
        monkeypatch.setattr(os, "link", no_link)
    path = tmp_path / "store" / "x.db"
    old = os.umask(0o277)  # stricter than wanted: SQLite could not even write the file
    try:
        prepare_sqlite_file(path)
    finally:
        os.umask(old)
    assert os.listdir(path.parent) == ["x.db"] and path.stat().st_size == 0
    assert (stat.S_IMODE(path.stat().st_mode), stat.S_IMODE(path.parent.stat().st_mode)) == (0o600, 0o700)

    journals = [Path(f"{path}{suffix}") for suffix in ("-wal", "-shm")]
    for file in (path, *journals):
        file.touch()
        os.chmod(file, 0o644)
    opened = []
    monkeypatch.setattr(os, "open", lambda *args, **kw: opened.append(args) or -1)
    prepare_sqlite_file(path)
    monkeypatch.undo()
    assert opened == [], "prepare_sqlite_file opened a descriptor of an existing database"
    assert [stat.S_IMODE(f.stat().st_mode) for f in (path, *journals)] == [0o600] * 3


def connects_to_sqlite(source: str) -> bool:
    """Whether the code calls ``sqlite3.connect`` or ``aiosqlite.connect`` (docstrings aside)."""
    return any(isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
               and node.func.attr == "connect" and isinstance(node.func.value, ast.Name)
               and node.func.value.id in ("sqlite3", "aiosqlite")
               for node in ast.walk(ast.parse(source)))


def test_every_module_that_opens_sqlite_is_known():
    """A new SQLite store joins SQLITE_FILES (and prepares its file with edge.core.sqlite_files)."""
    connecting = {str(p.relative_to(ROOT)) for folder in ("edge", "peripherals")
                  for p in (ROOT / folder).rglob("*.py") if connects_to_sqlite(p.read_text())}
    known = {m for s in SQLITE_FILES for m in s.modules} | set(READ_ONLY_READERS)
    assert connecting == known
