"""A real Home Assistant core for the tests: installed from PyPI into its own venv (pinned by
``requirements.txt`` beside this file), started on a loopback port with the MQTT integration
pointed at the test's Mosquitto, and driven through its REST API as a user's automations would.

The venv lives under ``${XDG_CACHE_HOME:-~/.cache}/edge-agent/home-assistant/<version>/``, one per
hash of the requirements; the first run builds it (about a minute with nothing cached: 56 to 77 s
here, most of it downloading) under a file lock, so parallel test runs wait for one build instead
of racing, and later runs reuse it. A build says on the terminal what it is doing
(tests/setup_progress.py); a run that finds the venv built says nothing.

>>> # ha = HomeAssistant(install(), tmp / "ha", broker_port=1883).start()
>>> # ha.states()["switch.garden_pump"]["state"]
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from tests.setup_progress import SetUpStep, setting_up, wait_for_lock

VERSION = "2024.3.3"
"""The last Home Assistant release that runs on Python 3.11 (2024.4 requires 3.12)."""
REQUIREMENTS = Path(__file__).with_name("requirements.txt")
INSTALL_TIMEOUT_SECONDS = 1200
START_TIMEOUT_SECONDS = 180
USER, PASSWORD = "edge", "edge-agent-test-password"

PROBLEM_LEVELS = ("WARNING", "ERROR", "CRITICAL")
_ENTRY = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+ (?P<level>[A-Z]+) ")
"""The first line of one record in home-assistant.log (the rest of a record, a traceback, follows
on lines without a timestamp)."""


class HomeAssistantUnavailable(AssertionError):
    """Home Assistant could not be installed or started; the message says what it printed."""


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "edge-agent" / "home-assistant" / VERSION


def _tail(text: str, lines: int = 40) -> str:
    return "\n".join(text.splitlines()[-lines:])


def install(python: str = sys.executable) -> Path:
    """The venv with Home Assistant (its ``bin/hass``), built on first use. A build that was
    interrupted is started again; one that fails raises HomeAssistantUnavailable with pip's
    output."""
    digest = hashlib.sha256(REQUIREMENTS.read_bytes()).hexdigest()[:12]
    root = cache_dir()
    root.mkdir(parents=True, exist_ok=True)
    venv = root / f"venv-{digest}"
    done = venv / ".installed"
    if done.exists():
        return venv
    with (root / ".lock").open("w") as lock:
        wait_for_lock(lock, f"Home Assistant {VERSION}")  # another run may be building it
        if done.exists():
            return venv
        with setting_up(f"Home Assistant {VERSION} for tests/homeassistant", cached_in=venv,
                        takes="first run on this machine: about 1 minute") as progress:
            _build(venv, python, progress)
        done.write_text(f"{VERSION} {digest} built in {progress.elapsed()}\n")
    return venv


def _build(venv: Path, python: str, progress: SetUpStep) -> None:
    shutil.rmtree(venv, ignore_errors=True)  # venvs are not relocatable: built in place
    progress.watch(venv)
    pinned = [line for line in REQUIREMENTS.read_text().splitlines() if line.strip()
              and not line.startswith("#")]
    steps = {"creating the venv": [python, "-m", "venv", str(venv)],
             f"pip installing {len(pinned)} pinned packages":
                 [str(venv / "bin" / "python"), "-m", "pip", "install", "--no-input",
                  "--disable-pip-version-check", "-r", str(REQUIREMENTS)]}
    for number, (name, step) in enumerate(steps.items(), 1):
        progress.say(f"step {number}/{len(steps)}: {name}")
        try:
            run = subprocess.run(step, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired as exc:
            raise HomeAssistantUnavailable(f"installing Home Assistant {VERSION} took over "
                                           f"{INSTALL_TIMEOUT_SECONDS} s: {' '.join(step)}") from exc
        if run.returncode != 0:
            raise HomeAssistantUnavailable(
                f"could not install Home Assistant {VERSION} into {venv} ({' '.join(step[:4])} "
                f"exited {run.returncode}; PyPI must be reachable):\n{_tail(run.stdout + run.stderr)}")
    return venv


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


CONFIGURATION = """\
homeassistant:
  name: edge-agent test
  latitude: 52.5
  longitude: 13.4
  elevation: 40
  unit_system: metric
  time_zone: UTC
  currency: EUR
  country: DE
http:
  server_host: 127.0.0.1
  server_port: {port}
logger:
  default: info
  logs:
    homeassistant.components.mqtt: debug
"""
"""No ``default_config``: the core, its http API and the MQTT integration (a config entry)."""


@dataclass(frozen=True)
class LogRecord:
    level: str
    text: str


class HomeAssistant:
    """One core in ``folder`` (its config directory), talking to the broker on ``broker_port``
    with discovery on under ``discovery_prefix``."""

    def __init__(self, venv: Path, folder: Path, *, broker_port: int,
                 discovery_prefix: str = "homeassistant"):
        self.venv, self.folder = venv, folder
        self.broker_port, self.discovery_prefix = broker_port, discovery_prefix
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None
        self.token = ""
        self.http = httpx.Client(base_url=self.url, timeout=30)

    @property
    def log_file(self) -> Path:
        return self.folder / "home-assistant.log"

    # start and stop --------------------------------------------------------------------------

    def start(self) -> HomeAssistant:
        self._write_config()
        self._add_user()
        with (self.folder / "stdout.log").open("wb") as out:
            self.proc = subprocess.Popen(
                [str(self.venv / "bin" / "hass"), "-c", str(self.folder), "--skip-pip",
                 "--log-no-color"], stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + START_TIMEOUT_SECONDS
        self._until(deadline, "its http API to answer", self._answers)
        try:
            self.token = self._log_in()
        except (httpx.HTTPError, AssertionError, KeyError) as exc:
            raise HomeAssistantUnavailable(f"could not log in to Home Assistant ({exc!r}):\n{self.output()}") from exc
        self.http.headers["Authorization"] = f"Bearer {self.token}"
        self._until(deadline, "the MQTT config entry to load", self._mqtt_loaded)
        return self

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self.proc = None
        self.http.close()

    def _write_config(self) -> None:
        storage = self.folder / ".storage"
        storage.mkdir(parents=True, exist_ok=True)
        (self.folder / "configuration.yaml").write_text(CONFIGURATION.format(port=self.port))
        entry = {"entry_id": secrets.token_hex(16), "version": 1, "minor_version": 1,
                 "domain": "mqtt", "title": f"127.0.0.1:{self.broker_port}",
                 "data": {"broker": "127.0.0.1", "port": self.broker_port, "discovery": True,
                          "discovery_prefix": self.discovery_prefix},
                 "options": {}, "pref_disable_new_entities": False, "pref_disable_polling": False,
                 "source": "user", "unique_id": None, "disabled_by": None}
        (storage / "core.config_entries").write_text(json.dumps(
            {"version": 1, "minor_version": 1, "key": "core.config_entries",
             "data": {"entries": [entry]}}, indent=1))

    def _add_user(self) -> None:
        done = subprocess.run([str(self.venv / "bin" / "hass"), "--script", "auth", "-c",
                               str(self.folder), "add", USER, PASSWORD],
                              capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise HomeAssistantUnavailable(f"hass --script auth add failed:\n{_tail(done.stdout + done.stderr)}")

    def _until(self, deadline: float, what: str, check: Any) -> None:
        while not check():
            if self.proc is not None and self.proc.poll() is not None:
                raise HomeAssistantUnavailable(
                    f"Home Assistant exited ({self.proc.returncode}) before {what}:\n{self.output()}")
            if time.monotonic() > deadline:
                raise HomeAssistantUnavailable(
                    f"Home Assistant did not get to {what} in {START_TIMEOUT_SECONDS} s:\n{self.output()}")
            time.sleep(0.2)

    def output(self) -> str:
        """The end of its log (or of what it printed, if it never opened its log)."""
        path = self.log_file if self.log_file.exists() else self.folder / "stdout.log"
        return _tail(path.read_text(errors="replace"), 60) if path.exists() else "(no output)"

    def _answers(self) -> bool:
        try:
            # not /api/ itself: unauthenticated, it logs a warning about the request (this one says
            # 400 "onboarding_required" until a user has onboarded, which ours never does)
            return self.http.get("/auth/providers").status_code in (200, 400)
        except httpx.TransportError:
            return False

    def _log_in(self) -> str:
        """A user's access token through the login flow the frontend uses."""
        client_id = f"{self.url}/"
        flow = self.http.post("/auth/login_flow", json={
            "client_id": client_id, "handler": ["homeassistant", None], "redirect_uri": client_id})
        flow.raise_for_status()
        step = self.http.post(f"/auth/login_flow/{flow.json()['flow_id']}", json={
            "client_id": client_id, "username": USER, "password": PASSWORD})
        step.raise_for_status()
        assert step.json().get("type") == "create_entry", step.text
        token = self.http.post("/auth/token", data={
            "grant_type": "authorization_code", "code": step.json()["result"], "client_id": client_id})
        token.raise_for_status()
        access: str = token.json()["access_token"]
        return access

    def _mqtt_loaded(self) -> bool:
        entries = self.http.get("/api/config/config_entries/entry", params={"domain": "mqtt"})
        entries.raise_for_status()
        return [e["state"] for e in entries.json()] == ["loaded"]

    # the REST API ----------------------------------------------------------------------------

    def states(self) -> dict[str, dict[str, Any]]:
        """entity_id -> its state object (``state``, ``attributes``)."""
        response = self.http.get("/api/states")
        response.raise_for_status()
        return {s["entity_id"]: s for s in response.json()}

    def state(self, entity_id: str) -> dict[str, Any]:
        response = self.http.get(f"/api/states/{entity_id}")
        response.raise_for_status()
        state: dict[str, Any] = response.json()
        return state

    def call(self, domain: str, service: str, **data: Any) -> None:
        response = self.http.post(f"/api/services/{domain}/{service}", json=data)
        assert response.status_code == 200, f"{domain}.{service} {data}: {response.status_code} {response.text}"

    def wait_state(self, entity_id: str, want: str, timeout: float = 10.0,
                   **attributes: Any) -> dict[str, Any]:
        """The entity's state once it is ``want`` (and has ``attributes``); AssertionError with
        the last one seen otherwise."""
        deadline = time.monotonic() + timeout
        while True:
            seen = self.state(entity_id)
            if seen["state"] == want and all(seen["attributes"].get(k) == v for k, v in attributes.items()):
                return seen
            if time.monotonic() > deadline:
                raise AssertionError(f"{entity_id} did not become {want!r} {attributes or ''} in "
                                     f"{timeout} s: {seen['state']!r} {seen['attributes']}")
            time.sleep(0.05)

    def websocket(self, command: str) -> Any:
        """The result of one websocket command (``config/entity_registry/list``), asked through
        aiohttp in Home Assistant's own venv (what the frontend asks; the REST API has no
        registry)."""
        done = subprocess.run([str(self.venv / "bin" / "python"), "-c", _WEBSOCKET_CLIENT,
                               f"ws://127.0.0.1:{self.port}/api/websocket", self.token, command],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, f"websocket {command}: {done.stderr}"
        reply = json.loads(done.stdout)
        assert reply.get("success"), f"websocket {command}: {reply}"
        return reply["result"]

    # the log ---------------------------------------------------------------------------------

    def log_records(self) -> list[LogRecord]:
        records: list[LogRecord] = []
        for line in self.log_file.read_text(errors="replace").splitlines():
            first = _ENTRY.match(line)
            if first:
                records.append(LogRecord(first["level"], line))
            elif records:
                records[-1] = LogRecord(records[-1].level, f"{records[-1].text}\n{line}")
        return records

    def problems(self, words: Iterable[str], topics: Iterable[str] = ()) -> list[str]:
        """Every warning or error in the log that mentions one of ``words`` (case-insensitive,
        anywhere in the record and its traceback) or a topic under one of ``topics`` (where a
        topic begins: ``homeassistant/`` is also in the path of every traceback's frames)."""
        wanted = [re.escape(w) for w in words if w]
        wanted += [rf"(?:^|[\s'\"(]){re.escape(t.rstrip('/'))}/" for t in topics]
        pattern = re.compile("|".join(wanted) or "(?!)", re.IGNORECASE | re.MULTILINE)
        return [r.text for r in self.log_records() if r.level in PROBLEM_LEVELS and pattern.search(r.text)]


_WEBSOCKET_CLIENT = """
import asyncio, json, sys
import aiohttp

async def main(url, token, command):
    async with aiohttp.ClientSession() as session, session.ws_connect(url, max_msg_size=0) as ws:
        await ws.receive_json()
        await ws.send_json({"type": "auth", "access_token": token})
        greeting = await ws.receive_json()
        assert greeting["type"] == "auth_ok", greeting
        await ws.send_json({"id": 1, "type": command})
        print(json.dumps(await ws.receive_json()))

asyncio.run(main(*sys.argv[1:]))
"""
