"""Structured log lines (key=value and JSON), redaction of secrets, the log file, recent errors."""

import ast
import json
import logging
import random
import threading
from pathlib import Path

import pytest

from edge.config.loader import load_config
from edge.core.logformat import JsonFormatter, KeyValueFormatter, parse_event, parse_line
from edge.core.logsetup import RecentEvents, RedactionFilter, configure, configure_from
from edge.core.redaction import Redactor, secret_values


def record(msg, *args, level=logging.INFO, exc_info=None):
    return logging.LogRecord("edge.tools.gpio", level, __file__, 1, msg, args, exc_info)


def test_key_value_line_is_one_event():
    line = KeyValueFormatter(journald=True).format(
        record("actuation board=%s pin=%s value=%s by=%s", "gpio", "GPIO17", "on", "telegram:42"))
    assert line == ("<6>level=info logger=edge.tools.gpio event=actuation board=gpio pin=GPIO17 "
                    "value=on by=telegram:42")


def test_prose_and_tracebacks_stay_on_one_line():
    try:
        raise ValueError("bad\nthing")
    except ValueError:
        import sys

        rec = record("Something odd happened", level=logging.ERROR, exc_info=sys.exc_info())
    line = KeyValueFormatter().format(rec)
    assert "\n" not in line
    assert line.startswith("ts=") and 'msg="Something odd happened"' in line
    assert parse_line(line)["exc"].startswith("Traceback")


def test_json_line_parses_fields():
    line = JsonFormatter().format(record("policy_refused board=%s pin=%s by=%s reason=%r",
                                         "gpio", "GPIO22", "cli:pi", "not allowlisted",
                                         level=logging.WARNING))
    event = json.loads(line)
    assert event["level"] == "warning" and event["event"] == "policy_refused"
    assert event["pin"] == "GPIO22" and event["by"] == "cli:pi"
    assert event["reason"] == "not allowlisted"
    assert "ts" in event
    assert parse_line(line) == event


def random_texts(count: int):
    """Texts with what quoting must survive: both quotes, backslashes, control characters,
    accents, emoji (outside the basic plane) and the escapes' own letters."""
    pieces = ["'", '"', "\\", "\n", "\t", "\r", "\x00", "\x7f", "\x9f", "é", "°C", "☃", "😀",
              "\u2028", "n", "x41", "u2603", " ", "=", "by=cli", "pi"]
    rng = random.Random(38)
    return [''.join(rng.choice(pieces) for _ in range(rng.randint(0, 12))) for _ in range(count)]


def test_quoted_values_read_back_as_python_reads_them():
    """Values quoted by repr() (what ``%r`` writes; as ``ast.literal_eval``, which the parser no
    longer calls, reads them) or by the JSON quoting (emoji as two escaped halves) read back as
    the texts they were."""
    for text in random_texts(3000):
        _, fields, _ = parse_event(f"said by={repr(text)}")
        assert fields["by"] == ast.literal_eval(repr(text)) == text, repr(text)
        _, fields, _ = parse_event(f"said by={json.dumps(text)}")
        assert fields["by"] == text, json.dumps(text)


def test_json_lines_from_many_threads_while_another_parses_python(capsys):
    """Every thread logs: formatting a line parses no Python, so it cannot meet CPython 3.11's
    shared syntax-tree depth counter (cpython#106905) in a thread that does."""
    formatter, texts, failures = JsonFormatter(), random_texts(200), []

    def log_lines():
        try:
            for text in texts * 5:
                line = formatter.format(record("said by=%r", text))
                assert json.loads(line)["by"] == text
        except BaseException as exc:  # noqa: BLE001 - reported below
            failures.append(exc)

    threads = [threading.Thread(target=log_lines) for _ in range(4)]
    for thread in threads:
        thread.start()
    source = Path(json.__file__).read_text()
    while any(thread.is_alive() for thread in threads):
        ast.parse(source)
    for thread in threads:
        thread.join()
    assert failures == []


@pytest.mark.parametrize("text,hidden", [
    ("calling https://api.telegram.org/bot123456:AAbbCC-dd_ee/getMe", "123456:AAbbCC-dd_ee"),
    ("headers={'Authorization': 'Bearer abc.def-123'}", "abc.def-123"),
    ("retry api_key=sk-live-1234567890abcdef attempt=2", "sk-live-1234567890abcdef"),
    ('body {"bot_token": "987:xyz"}', "987:xyz"),
    ("password: hunter22", "hunter22"),
])
def test_credential_shapes_are_masked(text, hidden):
    out = Redactor().redact(text)
    assert hidden not in out and "***" in out


def test_configured_secrets_are_masked_everywhere(tmp_path, capsys):
    env = {"EDGE_PROVIDER__API_KEY": "plain-secret-value", "EDGE_STATE_DIR": str(tmp_path)}
    loaded = load_config(env=env)
    assert secret_values(loaded.config) == ["plain-secret-value"]
    configure_from(loaded, env=env)
    log = logging.getLogger("edge.providers.openai")
    log.error("provider_failed detail=%s", "server echoed plain-secret-value back")
    try:
        raise RuntimeError("key plain-secret-value rejected")
    except RuntimeError:
        log.exception("provider_crashed")
    logging.getLogger().handlers[1].flush()
    written = (tmp_path / "edge-agent.log").read_text()
    stderr = capsys.readouterr().err
    for text in (written, stderr):
        assert "plain-secret-value" not in text
        assert text.count("***") == 3  # the event, the traceback's source line and message
    assert len(written.splitlines()) == 2  # one line per event, traceback included
    assert oct((tmp_path / "edge-agent.log").stat().st_mode & 0o777) == "0o640"


def test_no_log_file_under_systemd_and_journald_priorities(tmp_path, capsys):
    configure("info", style="json", file=tmp_path / "agent.log",
              env={"JOURNAL_STREAM": "8:1234", "INVOCATION_ID": "abc"})
    logging.getLogger("edge.runtime").warning("stopping reason=%s", "SIGTERM")
    assert not (tmp_path / "agent.log").exists()
    captured = capsys.readouterr()
    line = captured.out.strip()  # under journald the log goes to stdout, as the issue asks
    assert captured.err == "" and line.startswith("<4>{")
    assert json.loads(line[3:]) == {"level": "warning", "logger": "edge.runtime",
                                    "event": "stopping", "reason": "SIGTERM"}


def test_recent_events_keep_the_last_warnings_and_errors_redacted():
    events = RecentEvents(capacity=3, secrets=["tok-secret"]).attach()
    try:
        log = logging.getLogger("edge.channels.telegram")
        log.setLevel(logging.INFO)
        log.info("poll_ok")  # not kept: below WARNING
        for n in range(5):
            log.warning("poll_failed attempt=%d token=%s", n, "tok-secret")
    finally:
        events.detach()
    kept = events.snapshot()
    assert [e["message"] for e in kept] == [f"poll_failed attempt={n} token=***" for n in (2, 3, 4)]
    assert {e["level"] for e in kept} == {"warning"}
    logging.getLogger("edge.channels.telegram").warning("after detach")
    assert len(events.snapshot()) == 3


@pytest.fixture(autouse=True)
def restore_root_logger():
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    for handler in root.handlers:
        if handler not in handlers:
            handler.close()
    root.handlers[:] = handlers
    root.setLevel(level)


def test_redaction_filter_leaves_plain_events_alone():
    rec = record("actuation board=%s pin=%s value=%s", "gpio", "GPIO17", "on")
    RedactionFilter(Redactor(["nothing-here"])).filter(rec)
    assert rec.getMessage() == "actuation board=gpio pin=GPIO17 value=on"


def test_log_file_rotates_by_size_keeping_the_newest_backups(tmp_path):
    from edge.core.logsetup import RotatingLogFile

    path = tmp_path / "edge-agent.log"
    handler = RotatingLogFile(path, max_bytes=100, backups=2)
    handler.setFormatter(logging.Formatter("%(message)s"))
    log = logging.getLogger("test.rotation")
    log.propagate, log.level = False, logging.INFO
    log.addHandler(handler)
    try:
        for n in range(12):
            log.info("event=%02d %s", n, "x" * 30)
    finally:
        log.removeHandler(handler)
        handler.close()
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["edge-agent.log", "edge-agent.log.1", "edge-agent.log.2"]
    assert all(p.stat().st_size < 100 for p in tmp_path.iterdir())
    assert "event=11" in path.read_text()
    assert "event=00" not in "".join(p.read_text() for p in tmp_path.iterdir())  # dropped
    newest_backup = (tmp_path / "edge-agent.log.1").read_text()
    assert newest_backup < path.read_text()  # .1 holds the events just before the current file


@pytest.mark.parametrize(("level", "verbose", "shown"), [
    ("info", False, False), ("info", True, True), ("debug", False, True)])
def test_other_packages_requests_are_said_only_when_asked_for(level, verbose, shown, capsys):
    """httpx logs every request at info (a Telegram long poll each 30 s: 73 % of a day's log);
    the agent's own info events stay."""
    configure(level, env={}, verbose=verbose)
    try:
        logging.getLogger("httpx").info("HTTP Request: POST https://api.telegram.org/bot***/"
                                        'getUpdates "HTTP/1.1 200 OK"')
        logging.getLogger("httpx").warning("a library's warning")
        logging.getLogger("edge.runtime").info("agent_ready")
        err = capsys.readouterr().err
        assert ("getUpdates" in err) is shown
        assert "a library's warning" in err and "agent_ready" in err
    finally:
        configure("info", env={})
