"""The history of a real agent (``edge-cli run``, its Pi-health sensor read every half second):
``edge-cli sensors history`` and ``sensors chart`` ask it over its control socket; killed with
SIGKILL, its file is whole and lacks at most the last few seconds; with no agent, the same
commands read the file directly."""

from __future__ import annotations

import json
import signal
import sqlite3
import time
from pathlib import Path

import pytest

from edge.readings.recorder import FLUSH_SECONDS
from tests.helpers import cli, start_agent, wait_for

CONFIG = """
[boards.gpio.pins]
led = { mode = "output", safe = "off" }
[sensors.pi]
type = "pi"
interval_seconds = 0.5
"""
PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def env(isolated_env, write_config):
    return {**isolated_env, "EDGE_CONFIG": str(write_config(CONFIG))}


def history(env: dict[str, str], *argv: str) -> dict:
    out = cli("sensors", "history", "pi", *argv, "--json", env=env)
    assert out.returncode == 0, (out.stdout, out.stderr)
    return json.loads(out.stdout)


def readings(payload: dict) -> int:
    return sum(s["summary"]["count"] for s in payload["data"]["series"])


def test_through_the_agent_then_after_a_kill_from_the_file(env, tmp_path: Path) -> None:
    agent = start_agent(env)
    try:
        wait_for(lambda: readings(history(env, "memory_used", "--since", "5m")) >= 4, timeout=30)
        answer = history(env, "memory_used", "--since", "5m")
        assert answer["via"] == "daemon"
        [series] = answer["data"]["series"]
        assert series["unit"] == "%" and series["step"] == 0
        assert len(series["buckets"]) == series["summary"]["count"] >= 4

        chart = cli("sensors", "chart", "pi", "memory_used", "--since", "5m", "--output",
                    str(tmp_path / "live.png"), "--track", "led", "--json", env=env)
        assert chart.returncode == 0, chart.stderr
        drawn = json.loads(chart.stdout)
        assert drawn["via"] == "daemon" and "png_base64" not in drawn["data"]
        assert drawn["data"]["tracks"] == ["led"]  # the output asked for, though nothing switched it
        assert drawn["data"]["caption"].startswith("pi, ")
        assert (tmp_path / "live.png").read_bytes()[:8] == PNG
        assert drawn["data"]["bytes"] == (tmp_path / "live.png").stat().st_size

        time.sleep(FLUSH_SECONDS + 1)  # a few writer rounds, then the power goes
    finally:
        agent.send_signal(signal.SIGKILL)
        killed_at = time.time()
        agent.wait(timeout=30)

    path = Path(env["EDGE_STATE_DIR"]) / "readings.db"
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    newest = db.execute("SELECT max(at) FROM raw").fetchone()[0]
    assert newest >= killed_at - FLUSH_SECONDS - 2, killed_at - newest  # a few seconds lost at most
    db.close()

    direct = history(env, "--since", "5m")
    assert direct["via"] == "direct"
    assert {s["quantity"] for s in direct["data"]["series"]} >= {"memory_used", "load_1m"}
    csv = cli("sensors", "history", "pi", "memory_used", "--since", "5m", "--csv", env=env)
    lines = csv.stdout.splitlines()
    assert csv.returncode == 0 and lines[0].startswith("sensor,quantity,unit,start,end")
    assert len(lines) - 1 == readings(history(env, "memory_used", "--since", "5m"))
    offline = cli("sensors", "chart", "pi", "--since", "5m", "--output",
                  str(tmp_path / "offline.png"), "--track", "led", "--json", env=env)
    assert offline.returncode == 0, offline.stderr
    assert json.loads(offline.stdout)["data"]["tracks"] == ["led"]
    assert (tmp_path / "offline.png").read_bytes()[:8] == PNG


BAD = [
    (["sensors", "history"], "sensors history takes the sensor"),
    (["sensors", "history", "barn"], "no sensor 'barn' (sensors: pi)"),
    (["sensors", "history", "pi", "pressure"], "sensor pi has no 'pressure'"),
    (["sensors", "history", "pi", "--since", "soon"], "'soon' is neither a duration"),
    (["sensors", "history", "pi", "--output", "x.png"], "--output is not an option of sensors history"),
    (["sensors", "chart", "pi", "--csv", "--output", "x.png"], "--csv is not an option of sensors chart"),
    (["sensors", "history", "pi", "--track", "led"], "--track is not an option of sensors history"),
    (["sensors", "pi", "--track", "led"], "--track: only with `edge-cli sensors history`"),
    (["sensors", "history", "pi", "--points", "5000"], "--points 5000: at most 1000"),
    (["sensors", "chart", "pi"], "sensors chart needs --output FILE.png"),
    (["sensors", "chart", "barn", "--output", "x.png"], "no sensor 'barn'"),
    (["sensors", "pi", "--since", "1h"], "--since: only with `edge-cli sensors history`"),
]


@pytest.mark.parametrize("argv, message", BAD, ids=[" ".join(a[1:]) for a, _ in BAD])
def test_what_could_never_be_answered_exits_2(env, argv: list[str], message: str) -> None:
    out = cli(*argv, env=env)
    assert out.returncode == 2 and message in out.stderr, (out.returncode, out.stderr)
    body = json.loads(cli(*argv, "--json", env=env).stdout)
    assert (body["ok"], body["exit_code"]) == (False, 2) and message in body["error"], body


def test_csv_and_json_are_one_or_the_other(env) -> None:
    body = json.loads(cli("sensors", "history", "pi", "--csv", "--json", env=env).stdout)
    assert (body["exit_code"], body["error"]) == (2, "--csv and --json: choose one")


def test_a_sensor_cannot_be_named_like_the_commands_words(isolated_env, write_config) -> None:
    path = write_config('[sensors.history]\ntype = "pi"\n')
    out = cli("config", "check", "--config", str(path), env=isolated_env)
    assert out.returncode == 2
    assert "sensor name 'history' is taken by `edge-cli sensors history NAME`" in out.stderr + out.stdout
