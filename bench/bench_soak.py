"""A soak: a real ``edge-cli run`` with everything on (mock pins, the emulated Uno, a fake model,
Telegram and MQTT on loopback, 20 rules, 10 schedules, a sensor polled every 50 ms, memory with
the embedding model) through a busy week's work: at ``--scale 1.0`` (about an hour) 10,000 model
turns, 100,000 input edges on the Uno, 5,000 MQTT commands and 100 outages each of the broker
(Mosquitto stopped and started), the provider (the fake model answers 500 or hangs) and the board
(the emulator stopped and started); the schedules run every 3 s and the rule on the Uno's button
fires on every rising edge (half the edges), and the log file rotates throughout.

It samples the agent's RSS, open descriptors (/proc/PID/fd), threads (/proc/PID/status), asyncio
tasks (``status`` -> ``daemon.asyncio_tasks`` when the agent reports it) and the size of every
file under the state directory. The baseline is taken quiet after a warm-up (a tenth of the
work), the end quiet after the rest: targets are RSS growth under 3 MB, descriptors, threads and
tasks back to their baseline, and every log file within its rotation size (1 MB, 3 backups).

``python -m bench soak`` runs scale 1.0 (``EDGE_SOAK_SCALE`` overrides it); tests/soak runs the
same driver scaled down."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiomqtt

from bench.process import row
from edge.agent.sessions import KEPT_TURNS
from edge.config.model import AuditConfig, MemoryConfig
from edge.core.logsetup import LOG_FILE_BACKUPS, LOG_FILE_MAX_BYTES
from edge.memory.onnx_embedder import DIMENSIONS
from edge.memory.vector_index import capacity_for
from edge.readings.store import RAW_KEEP_SECONDS, READINGS_FILE, TIERS
from tests.emulation.build import arduino_elf, avr_emulator
from tests.emulation.simavr import SimAvr
from tests.fakes.mosquitto import Mosquitto
from tests.fakes.openai_server import OpenAIServer, Reply, completion, error_body
from tests.fakes.telegram_server import FakeTelegram, telegram_config
from tests.helpers import EDGE_CLI, ROOT, cli

FULL = {"turns": 10_000, "edges": 100_000, "mqtt": 5_000, "outages": 100}
"""A busy week's work, done at ``scale = 1.0`` in about an hour."""
HOUR = 3600.0
WARM_UP = 0.1
"""The share of the work done before the baseline is sampled, measured from there to the end."""
WARM_UP_SECONDS = 90.0
"""The warm-up lasts at least this long (at small scales it does more work than its share, at
the same pace, and the measured stretch after it is still 90% of the scale's work): the agent's
own slowest clocks must have turned once before the baseline: its rate-limit windows hold a
minute of events, and memory hygiene first runs a minute after start."""
RSS_GROWTH_MB = 3.0
NODE = "soak"
SCHEDULES, EVERY_SECONDS = 10, 3
"""Ten schedules every 3 s: 12,000 runs in the hour (status keeps no count; this is the
number due, which the scheduler's ``schedule_done`` lines in the log match)."""
USERS = (42, 43)
"""Two people chat at once, each waiting for the answer before the next message: one alone
could not keep the hour's pace (2.8 turns a second) on a busy build machine."""
MIB = 1024 * 1024
AUDIT, MEMORY = AuditConfig(), MemoryConfig()
"""The soak's config leaves both sections at their defaults."""


@dataclass
class Sample:
    at: float
    rss_kib: int
    anon_kib: int
    """Private memory: the heap, Python's arenas, SQLite's caches, the vector index."""
    file_kib: int
    """Pages of mapped files: code, the model's word table (a row is read in the first time a
    word is embedded), ``brain.db`` through SQLite's mmap; the kernel's to drop and re-read."""
    fds: int
    threads: int
    tasks: int | None
    files: dict[str, int]
    memories: int | None = None
    open_files: list[str] = field(default_factory=list)
    """What the descriptors point at (to name the difference when their count grew)."""
    quantities: int = 0
    """Quantities the sensor history holds (its file's bound grows with them)."""


@dataclass
class Counts:
    turns: int = 0
    turns_unanswered: int = 0
    edges: int = 0
    mqtt: int = 0
    mqtt_refused: int = 0
    outages: dict[str, int] = field(default_factory=lambda: {"broker": 0, "provider": 0, "board": 0})
    late: dict[str, float] = field(default_factory=dict)
    """Seconds each stream of work ended after its share of the duration (it cannot go faster)."""


@dataclass
class Report:
    scale: float
    seconds: float
    counts: Counts
    baseline: Sample
    end: Sample
    samples: list[Sample]
    rule_firings: int | None
    schedule_runs: int | None

    @property
    def memories(self) -> int | None:
        """Rows in ``brain.db`` at the end (``status``)."""
        return self.end.memories

    def vectors_mb(self) -> float | None:
        """What the in-memory vector index grew by for the memories stored after the baseline
        (its matrix, 1,536 bytes a row, grows a quarter at a time): the data kept, not a leak."""
        if self.baseline.memories is None or self.end.memories is None:
            return None
        rows = capacity_for(self.end.memories) - capacity_for(self.baseline.memories)
        return rows * DIMENSIONS * 4 / MIB

    def unexplained_growth_mb(self) -> float | None:
        vectors = self.vectors_mb()
        if vectors is None:
            return None
        return (self.end.anon_kib - self.baseline.anon_kib) / 1024 - vectors

    def failures(self) -> list[str]:
        """The targets missed, each as a sentence (empty: all met)."""
        found = []
        growth = self.unexplained_growth_mb()
        if growth is None:
            found.append("memories not counted: the growth of their vectors is unknown")
        elif growth >= RSS_GROWTH_MB:
            found.append(f"private memory (RssAnon) grew {growth:.1f} MB after warm-up beyond the "
                         f"new memories' vectors (target < {RSS_GROWTH_MB} MB)")
        for name in ("fds", "threads", "tasks"):
            start, end = getattr(self.baseline, name), getattr(self.end, name)
            if start is None or end is None:
                found.append(f"{name}: not measured")
            elif end > start:
                extra = sorted(set(self.end.open_files) - set(self.baseline.open_files))
                found.append(f"{name} {start} -> {end} (target: back to the baseline)"
                             + (f"; new: {', '.join(extra)}" if name == "fds" else ""))
        for path, size in self.end.files.items():
            bound, why = file_bound(path, self)
            if bound is None:
                found.append(f"{path}: no bound known for it ({why})")
            elif size > bound:
                found.append(f"{path} is {size} bytes, over its bound of {bound} ({why})")
        return found


WAL_BOUND = 5 * MIB
"""SQLite checkpoints a WAL at 1,000 pages (4 MiB; the transaction that crosses it may add some),
and the agent's ``journal_size_limit`` cuts it back to 1 MiB after a checkpoint."""
SMALL_BOUND = 64 * 1024
MEMORY_ROW_BOUND = 8 * 1024
"""Bytes of ``brain.db`` per memory: its text, its vector (1,536 bytes) twice (the row and the
embedding cache), the FTS index."""


READINGS_ROWS_PER_QUANTITY = int(RAW_KEEP_SECONDS + sum(t.keep / t.width for t in TIERS))
"""The sensor history's rows for one quantity at most: a raw reading a second, and its tiers."""
READINGS_ROW_BOUND = 64
"""Bytes a history row may take with its index (about 30 measured: tests/readings/test_size.py)."""


def recorded_quantities(path: Path) -> int:
    """How many quantities the sensor history at ``path`` holds (read-only; 0 before it exists)."""
    if not path.is_file():
        return 0
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
        return int(db.execute("SELECT count(*) FROM quantities").fetchone()[0])


def file_bound(path: str, report: Report) -> tuple[int | None, str]:
    """The most ``path`` (under the state directory) may hold after the soak, and why."""
    name = Path(path).name
    if name.startswith("edge-agent.log"):
        suffix = name.removeprefix("edge-agent.log").lstrip(".")
        if suffix and (not suffix.isdigit() or int(suffix) > LOG_FILE_BACKUPS):
            return None, f"more than {LOG_FILE_BACKUPS} log backups"
        return LOG_FILE_MAX_BYTES, f"rotation at {LOG_FILE_MAX_BYTES // 1024} KiB, {LOG_FILE_BACKUPS} kept"
    if name.endswith("-wal"):
        return WAL_BOUND, "checkpoint at 1,000 pages, cut to 1 MiB"
    if name.endswith("-shm"):
        return SMALL_BOUND, "the WAL's index"
    if name == "audit.db":
        return int(AUDIT.max_megabytes * MIB), f"[audit] max_megabytes = {AUDIT.max_megabytes:g}"
    if name == "brain.db":
        if report.memories is None:
            return None, "status did not say how many memories"
        return (report.memories * MEMORY_ROW_BOUND + MIB,
                f"{report.memories} memories (conversations kept {MEMORY.conversation_retention_days} "
                f"days), {MEMORY_ROW_BOUND // 1024} KiB each")
    if name.endswith(".jsonl") and Path(path).parent.name == "sessions":
        return 2 * KEPT_TURNS * 1024, (f"the last {KEPT_TURNS}-{2 * KEPT_TURNS} turns of a chat "
                                       "(the soak's are under 1 KiB)")
    if name == READINGS_FILE:
        quantities = report.end.quantities
        return (quantities * READINGS_ROWS_PER_QUANTITY * READINGS_ROW_BOUND + MIB,
                f"{quantities} quantities, each at most one raw reading a second for "
                f"{RAW_KEEP_SECONDS / 3600:g} h and its 5-minute and hourly tiers, "
                f"{READINGS_ROW_BOUND} B a row")
    if Path(path).parent.name == "models":
        return report.baseline.files.get(path), "written once"
    if name in ("sessions.json", "schedules.json", "runs.json", "offset", "mqtt-client-id",
                "agent.lock", "MEMORY_SNAPSHOT.md"):
        return SMALL_BOUND, "a few entries"
    return None, "unknown file"


def config_text(uno: SimAvr, model: OpenAIServer, telegram: FakeTelegram, broker: Mosquitto) -> str:
    outputs = {f"out{n}": f"GPIO{n}" for n in (17, 18, 22, 23, 24, 25)}
    inputs = {f"in{n}": f"GPIO{n}" for n in range(4, 16) if f"GPIO{n}" not in outputs.values()}
    gpio_pins = {**{name: '{ mode = "output", safe = "off", max_switches_per_minute = 6000 }'
                    for name in outputs},
                 **{name: '{ mode = "input" }' for name in inputs}}
    rules = [("button", "button rising", "gpio write lamp on"),
             ("button_low", "button falling", "gpio write lamp off"),
             ("level_high", "tank.value > 0.9", "gpio write out18 on")]
    rules += [(f"idle{i}", f"{name} changes", "gpio write out22 on")
              for i, name in enumerate(list(inputs) * 2)][:20 - len(rules)]
    aliases = ", ".join(f'{k} = "{v}"' for k, v in {**outputs, **inputs}.items())
    text = [telegram_config(telegram, extra="rate_limit_per_minute = 100000"),
            f'[provider]\nbase_url = "{model.base_url}"\nmodel = "soak-model"\napi_key = "sk-soak"\n'
            "timeout_seconds = 2\nmax_retries = 0\n",
            '[memory]\nbackend = "sqlite"\nembedder = "onnx"\n',
            f'[mqtt]\nurl = "{broker.url}"\nnode_id = "{NODE}"\ndiscovery = false\n',
            "[security]\nmax_actuations_per_minute = 1000000\n",
            "[boards.gpio]\ntype = \"gpio\"\nsimulate = true\n"
            f"aliases = {{ {aliases} }}\n"
            "[boards.gpio.pins]\n" + "".join(f"{k} = {v}\n" for k, v in gpio_pins.items()),
            f'[boards.uno]\ntype = "arduino"\nport = "{uno.link}"\nwatchdog_ms = 0\n'
            'aliases = { lamp = "D13", button = "D2", level = "A0" }\n[boards.uno.pins]\n'
            'lamp = { mode = "output", safe = "off", max_switches_per_minute = 6000 }\n'
            'button = { mode = "input", pull = "none", active = "high" }\nlevel = { mode = "analog" }\n',
            '[sensors.tank]\ntype = "analog"\npin = "uno:A0"\ninterval_seconds = 0.05\n']
    for name, when, then in rules:
        text.append(f'[[rules]]\nname = "{name}"\nwhen = "{when}"\nthen = ["{then}"]\n'
                    "cooldown_seconds = 0\n")
    for n in range(SCHEDULES):
        pin = list(outputs)[n % len(outputs)]
        text.append(f'[[schedules]]\nname = "tick{n}"\nevery = "{EVERY_SECONDS}s"\n'
                    f'action = "gpio write {pin} {"on" if n % 2 else "off"}"\n')
    return "\n".join(text)


def status_of(env: dict[str, str]) -> tuple[int | None, int | None]:
    """The agent's asyncio tasks and memories, from ``status``."""
    done = cli("status", "--json", env=env, timeout=30)
    if done.returncode != 0:
        return None, None
    status = json.loads(done.stdout).get("data") or {}
    tasks = (status.get("daemon") or {}).get("asyncio_tasks")
    memories = (status.get("memory") or {}).get("entries")
    return (int(tasks) if tasks is not None else None,
            int(memories) if memories is not None else None)


def sample(pid: int, state: Path, env: dict[str, str] | None, started: float) -> Sample:
    """/proc's figures and the state files; the asyncio tasks and memories too (through
    ``status``, asked first: what answering it opens is counted the same at both ends) when
    ``env`` is given: only the quiet samples ask, so the busy ones cost the agent nothing."""
    tasks, memories = status_of(env) if env is not None else (None, None)
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines())
    files = {str(p.relative_to(state)): p.stat().st_size for p in sorted(state.rglob("*"))
             if p.is_file() and not p.is_socket()}
    return Sample(round(time.monotonic() - started, 1), int(fields["VmRSS"].split()[0]),
                  int(fields["RssAnon"].split()[0]), int(fields["RssFile"].split()[0]),
                  len(os.listdir(f"/proc/{pid}/fd")), int(fields["Threads"]), tasks, files,
                  memories, sorted(os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")
                                   if os.path.lexists(f"/proc/{pid}/fd/{fd}")),
                  recorded_quantities(state / READINGS_FILE))


class Soak:
    """The agent, its surroundings and the work, in ``folder``."""

    def __init__(self, folder: Path, scale: float):
        self.folder, self.scale = folder, scale
        self.amounts = {k: max(1, round(v * scale)) for k, v in FULL.items()}
        self.duration = HOUR * scale
        self.counts = Counts()
        self.provider_down: str | None = None
        self._one_at_a_time = threading.Lock()
        self.uno = SimAvr(avr_emulator(), arduino_elf(), folder)
        self.broker = Mosquitto(folder / "broker")
        self.model = OpenAIServer(api_key="sk-soak", responder=self._answer)
        self.telegram = FakeTelegram()
        self.state = folder / "state"
        self.env = dict(os.environ, EDGE_CONFIG=str(folder / "config.toml"),
                        EDGE_STATE_DIR=str(self.state), HOME=str(folder))
        self.env.pop("INVOCATION_ID", None)  # not under systemd: the log file is written
        self.env.pop("JOURNAL_STREAM", None)
        self.agent: subprocess.Popen[str] | None = None

    def _answer(self, body: dict[str, Any]) -> Reply:
        match self.provider_down:
            case "500":
                return error_body(500, "the soak's provider is down")
            case "hang":
                time.sleep(3)  # past the agent's timeout_seconds
                return error_body(500, "the soak's provider hung")
        return 200, completion(f"noted ({len(body['messages'])} messages)")

    def __enter__(self) -> Soak:
        self.uno.start()
        self.broker.start()
        self.model.__enter__()
        self.telegram.__enter__()
        config = self.folder / "config.toml"
        config.write_text(config_text(self.uno, self.model, self.telegram, self.broker))
        config.chmod(0o600)  # it holds the bot's token: readable by the agent's user alone
        checked = cli("config", "check", env=self.env)
        if checked.returncode != 0:
            raise RuntimeError(f"the soak's config is refused: {checked.stdout}{checked.stderr}")
        self.agent = self._start_agent()
        self._turn(0, timeout=120)  # the first turn loads the embedding model
        return self

    def _start_agent(self, timeout: float = 120) -> subprocess.Popen[str]:
        """``edge-cli run``, its console output to a file: a pipe nobody reads fills, and then
        the agent's logging blocks its event loop."""
        with (self.folder / "agent.stderr").open("w") as console:
            agent = subprocess.Popen([*EDGE_CLI, "run"], env=self.env, cwd=ROOT,
                                     stdin=subprocess.DEVNULL, stdout=console, stderr=console,
                                     text=True)
        deadline = time.monotonic() + timeout
        while not (self.state / "control.sock").exists():
            if agent.poll() is not None or time.monotonic() > deadline:
                agent.kill()
                raise RuntimeError("the agent did not start: "
                                   + (self.folder / "agent.stderr").read_text()[-2000:])
            time.sleep(0.05)
        return agent

    def __exit__(self, *exc: object) -> None:
        if self.agent is not None:
            self.agent.terminate()
            try:
                self.agent.wait(30)
            except subprocess.TimeoutExpired:
                self.agent.kill()
        self.telegram.__exit__()
        self.model.__exit__()
        self.broker.kill()
        self.uno.stop()

    # the work -----------------------------------------------------------------------------------

    def _turn(self, index: int, user: int = USERS[0], timeout: float = 15) -> None:
        calls = self.telegram.calls
        seen = len(calls)  # only the calls after this one are looked at: the list grows all hour

        def answered() -> bool:
            return any(name == "sendMessage" and str(params.get("chat_id")) == str(user)
                       for name, params in calls[seen:])

        with self._one_at_a_time:  # the fake numbers messages outside its lock
            self.telegram.push_message(user, f"remember that reading {index} was {index % 97} litres")
        try:
            self.telegram.wait_for(answered, timeout)
            unanswered = 0
        except AssertionError:
            unanswered = 1
        with self._one_at_a_time:
            self.counts.turns += 1
            self.counts.turns_unanswered += unanswered

    def _paced(self, stream: str, share: tuple[float, float], amount: int, step: Any,
               outages: int = 0, outage: Any = None) -> None:
        """Do ``step(i)`` for this share of ``amount`` spread over the share of the duration,
        ``outage()`` evenly among them."""
        first, last = round(amount * share[0]), round(amount * share[1])
        if last <= first:
            return
        span = self.duration * (share[1] - share[0])
        count = last - first
        outs = max(1, round(outages * (share[1] - share[0]))) if outages and outage else 0
        at = {round((k + 0.5) * count / outs) for k in range(outs)}
        start = time.monotonic()
        for n, index in enumerate(range(first, last)):
            wait = start + span * n / count - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            if n in at:
                outage()
            step(index)
        late = time.monotonic() - start - span
        self.counts.late[stream] = round(self.counts.late.get(stream, 0.0) + max(0.0, late), 1)

    def turns(self, share: tuple[float, float]) -> None:
        """Each user's half of the turns, both at once; the provider's outages in the first's."""
        def outage() -> None:
            self.counts.outages["provider"] += 1
            self.provider_down = "hang" if self.counts.outages["provider"] % 2 else "500"
            self._turn(-1)
            self.provider_down = None

        def chat(user: int) -> None:
            first = user == USERS[0]
            self._paced(f"turns {user}", share, self.amounts["turns"] // len(USERS),
                        lambda index: self._turn(index, user), self.amounts["outages"] if first else 0,
                        outage if first else None)

        chats = [threading.Thread(target=chat, args=(user,), daemon=True) for user in USERS]
        for thread in chats:
            thread.start()
        for thread in chats:
            thread.join()

    def edges(self, share: tuple[float, float]) -> None:
        board_up = threading.Event()
        board_up.set()

        def edge(index: int) -> None:
            self.uno.drive("D2", index % 2)
            self.counts.edges += 1

        def outage() -> None:
            self.counts.outages["board"] += 1
            self.uno.stop()
            time.sleep(0.5)
            self.uno.start()
            time.sleep(1.0)  # the supervisor reconnects (an edge before it is simply unseen)

        self._paced("edges", share, self.amounts["edges"], edge, self.amounts["outages"], outage)

    def commands(self, share: tuple[float, float]) -> None:
        async def publish(index: int) -> None:
            async with aiomqtt.Client("127.0.0.1", self.broker.port, timeout=5) as client:
                await client.publish(f"edge-agent/{NODE}/out25/set", b"ON" if index % 2 else b"OFF",
                                     qos=1)

        def command(index: int) -> None:
            try:
                asyncio.run(publish(index))
                self.counts.mqtt += 1
            except aiomqtt.MqttError:
                self.counts.mqtt_refused += 1

        def outage() -> None:
            self.counts.outages["broker"] += 1
            self.broker.stop()
            time.sleep(1.0)
            self.broker.start()

        self._paced("mqtt", share, self.amounts["mqtt"], command, self.amounts["outages"], outage)

    def work(self, share: tuple[float, float]) -> None:
        """Every stream of work at once, each in its own thread, for this share of it."""
        threads = [threading.Thread(target=part, args=(share,), daemon=True)
                   for part in (self.turns, self.edges, self.commands)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    def quiet_sample(self, started: float, settle: float = 30.0, baseline: Sample | None = None) -> Sample:
        """A sample once the agent is quiet: after a pause, and (at the end) once descriptors,
        threads and tasks are back to the baseline or ``settle`` seconds have passed."""
        assert self.agent is not None
        time.sleep(5)
        deadline = time.monotonic() + settle
        while True:
            now = sample(self.agent.pid, self.state, self.env, started)
            if baseline is None or time.monotonic() > deadline or all(
                    getattr(now, k) is None or getattr(baseline, k) is None
                    or getattr(now, k) <= getattr(baseline, k) for k in ("fds", "threads", "tasks")):
                return now
            time.sleep(2)

    def run(self) -> Report:
        assert self.agent is not None
        started = time.monotonic()
        samples: list[Sample] = []
        stop = threading.Event()

        def sampler() -> None:
            while not stop.wait(max(5.0, self.duration / 120)):
                if self.agent is not None and self.agent.poll() is None:
                    samples.append(sample(self.agent.pid, self.state, None, started))

        watching = threading.Thread(target=sampler, daemon=True)
        watching.start()
        warm_up = max(WARM_UP, WARM_UP_SECONDS / self.duration)
        self.work((0.0, warm_up))
        baseline = self.quiet_sample(started)
        self.work((warm_up, warm_up + 1.0 - WARM_UP))
        stop.set()
        watching.join()
        assert self.agent.poll() is None, "the agent exited during the soak"
        end = self.quiet_sample(started, baseline=baseline)
        status = json.loads(cli("status", "--json", env=self.env).stdout).get("data") or {}
        seconds = time.monotonic() - started
        return Report(self.scale, seconds, self.counts, baseline, end, samples,
                      sum(int(rule.get("fired") or 0) for rule in status.get("rules") or []),
                      int(SCHEDULES * seconds / EVERY_SECONDS))


def drive(scale: float, folder: Path) -> Report:
    """The soak at ``scale`` (1.0: a busy week's work in about an hour) in ``folder``."""
    with Soak(folder, scale) as soak:
        return soak.run()


def print_report(report: Report) -> None:
    c = report.counts
    print(f"soak at scale {report.scale:g}: {report.seconds / 60:.1f} min; {c.turns} model turns "
          f"({c.turns_unanswered} unanswered), {c.edges} input edges, {c.mqtt} MQTT commands "
          f"({c.mqtt_refused} refused in outages), outages {c.outages}; rule firings "
          f"{report.rule_firings}, schedule runs due {report.schedule_runs}; streams late by "
          f"{c.late} s; {report.memories} memories at the end")
    base, end = report.baseline, report.end
    for label, name, target in (("RSS", "rss_kib", ""),
                                ("private (RssAnon)", "anon_kib", ""),
                                ("file-backed (RssFile)", "file_kib", "")):
        start, stop = getattr(base, name), getattr(end, name)
        row(f"{label} after warm-up -> end", f"{start / 1024:.1f} -> {stop / 1024:.1f} MB", target,
            f"{(stop - start) / 1024:+.1f} MB")
        if name == "anon_kib" and (vectors := report.vectors_mb()) is not None:
            row(f"  of it the vectors of {base.memories} -> {end.memories} memories",
                f"{vectors:.1f} MB", f"the rest: {report.unexplained_growth_mb():+.1f} MB, "
                f"target < {RSS_GROWTH_MB:g} MB")
    if report.samples:
        row("RSS peak while busy", f"{max(s.rss_kib for s in report.samples) / 1024:.1f} MB")
        row("RSS median while busy", f"{statistics.median(s.rss_kib for s in report.samples) / 1024:.1f} MB")
    for name in ("fds", "threads", "tasks"):
        row(f"{name} baseline -> end", f"{getattr(base, name)} -> {getattr(end, name)}",
            "target: back to baseline")
    for path in sorted(set(base.files) | set(end.files)):
        bound, why = file_bound(path, report) if path in end.files else (None, "gone")
        limit = f"<= {bound / 1024:.0f} KiB: {why}" if bound is not None else why
        row(f"  {path}"[:42], f"{base.files.get(path, 0) / 1024:.0f} -> {end.files.get(path, 0) / 1024:.0f} KiB",
            limit)
    for failure in report.failures():
        print(f"  MISSED: {failure}")


def main() -> None:
    scale = float(os.environ.get("EDGE_SOAK_SCALE", "1.0"))
    if "--scale" in sys.argv:
        scale = float(sys.argv[sys.argv.index("--scale") + 1])
    with tempfile.TemporaryDirectory() as tmp:
        report = drive(scale, Path(tmp))
    print_report(report)
    if report.failures():
        raise SystemExit(1)


if __name__ == "__main__":
    main()
