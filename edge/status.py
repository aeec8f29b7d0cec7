"""Human-readable status, shared by ``edge-cli status`` and the ``/status`` command (no heavy imports).

Supervised tasks (:mod:`edge.core.supervision`: the scheduler, the rules, each sensor's polling, the
MQTT bridge, ...) are listed in the status's ``tasks``; the text names only those that are down.

Memory is shown only when a memory store exists in the state directory: a SQLite file with the
``memories`` table (``memory/brain.db`` or any ``*.db`` there or in ``memory/``), or the
Markdown backend's ``MEMORY.md``. Nothing is shown, rather than a made-up figure, when there is none.

Error text in a status (channels' last errors, recent log events, board details) is redacted with
the rules the logs use (:mod:`edge.core.redaction`), for everyone. ``format_status(status,
full=False)`` is what a non-admin sees: states and names, no file paths, provider URLs, board
details or error text.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from edge.core.localtime import local_time
from edge.core.redaction import Redactor
from edge.status_lines import (
    fleet_line,
    mcp_servers_line,
    moment_ago,
    mqtt_line,
    span,
    storage_line,
    task_line,
    times,
    tokens_line,
)

RECENT_ERRORS_SHOWN = 5


def _sqlite_entries(path: Path) -> int | None:
    """Rows in the ``memories`` table, read-only; None if the file is not a memory store."""
    import sqlite3
    from contextlib import closing

    try:  # closing: a connection's own ``with`` only commits; its cycle kept it open until a GC
        with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=1.0)) as db:
            return int(db.execute("SELECT COUNT(*) FROM memories").fetchone()[0])
    except sqlite3.Error:
        return None


def memory_store_summary(state_dir: Path) -> dict[str, Any] | None:
    """``{"backend", "path", "entries", "bytes"}`` for the memory store found, else None."""
    for folder in (state_dir / "memory", state_dir):
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.db")):
            entries = _sqlite_entries(path)
            if entries is not None:
                return {"backend": "sqlite", "path": str(path), "entries": entries,
                        "bytes": path.stat().st_size}
        markdown = folder / "MEMORY.md"
        if markdown.is_file():
            files = [markdown, *sorted((folder / "daily").glob("*.md"))]
            return {"backend": "markdown", "path": str(markdown), "entries": None,
                    "bytes": sum(f.stat().st_size for f in files)}
    return None


def format_bytes(size: int) -> str:
    amount = float(size)
    for unit in ("B", "KiB", "MiB"):
        if amount < 1024:
            return f"{amount:.0f} {unit}" if unit == "B" else f"{amount:.1f} {unit}"
        amount /= 1024
    return f"{amount:.1f} GiB"


def readings_text(readings: dict[str, dict[str, Any]]) -> str:
    """A sensor's readings as status and ``/sensors`` show them.

    >>> readings_text({"temperature": {"value": 21.5, "unit": "°C"}, "load": {"value": 1, "unit": ""}})
    'temperature 21.5 °C, load 1'
    """
    return ", ".join(f"{q} {r['value']:g} {r['unit']}".rstrip()
                     for q, r in readings.items()) or "no reading yet"


def redact_status(status: dict[str, Any], secrets: Iterable[str] = ()) -> dict[str, Any]:
    """A copy of ``status`` with its free text (errors, board details) redacted like the logs.

    >>> redact_status({"channels": [{"name": "telegram", "last_error": "GET /bot1:abc failed"}]})
    {'channels': [{'name': 'telegram', 'last_error': 'GET /bot*** failed'}]}
    """
    redactor = Redactor(secrets)

    def clean(rows: list[dict[str, Any]], key: str) -> list[dict[str, Any]]:
        return [{**row, key: redactor.redact(row[key])} if isinstance(row.get(key), str) else row
                for row in rows]

    out = dict(status)
    for section, key in (("channels", "last_error"), ("tasks", "last_error"),
                         ("recent_errors", "message"), ("boards", "detail"), ("sensors", "error"),
                         ("rules", "last_error"), ("schedules", "last_result")):
        if isinstance(out.get(section), list):
            out[section] = clean(out[section], key)
    for single in ("provider", "mqtt"):
        if isinstance(out.get(single), dict):
            (out[single],) = clean([out[single]], "last_error")
    if isinstance(out.get("last_end"), dict):
        (out["last_end"],) = clean([out["last_end"]], "reason")
    return out


Status = dict[str, Any]


def _daemon(status: Status, full: bool) -> list[str]:
    daemon = status.get("daemon") or {}
    if daemon.get("running"):
        return [f"edge-agent {daemon.get('version')}: running (pid {daemon.get('pid')}, "
                f"up {span(daemon.get('uptime_seconds', 0))})"]
    return [f"edge-agent {daemon.get('version')}: daemon not running "
            "(start it with `edge-cli run` or `systemctl start edge-agent`)"]


def _running(status: Status) -> bool:
    return bool((status.get("daemon") or {}).get("running"))


def _last_end(status: Status, full: bool) -> list[str]:
    last_end = status.get("last_end")
    if not last_end:
        return []
    reason = last_end["reason"] if full or last_end.get("killed_for_memory") else "not clean"
    return [f"last end: {reason} at {last_end['at'].replace('T', ' ')}"]


def _safe_mode(status: Status, full: bool) -> list[str]:
    safe = status.get("safe_mode")
    if not safe:
        return []
    last = f" (last: {safe['reason']})" if full else ""
    return [f"SAFE MODE since {safe['since']}: {safe['ends']} abnormal ends in 10 minutes{last}; "
            "rules and schedules held, model turns refused; leave it with `edge-cli resume` or "
            "an admin's /resume"]


def _config(status: Status, full: bool) -> list[str]:
    return [f"config: {status.get('config', '?')}"] if full else []


def _boards(status: Status, full: bool) -> list[str]:
    lines = []
    for board in status.get("boards", []):
        state = "connected" if board["connected"] else "not connected"
        detail = f", {board['detail']}" if full else ""
        lines.append(f"board {board['name']} ({board['kind']}): {state}{detail}")
        warning = (board.get("info") or {}).get("warning")
        if warning and full:
            lines.append(f"  warning: {warning}")
    for event in (status.get("board_events") or [])[-3:]:
        where = f" {event['shown']}" if event.get("shown") else (
            f" {event['pin']}={event['value']:g}" if event.get("pin") else "")
        lines.append(f"  {moment_ago(event['time'])}: {event['board']} {event['kind']}{where}")
    return lines


def _channels(status: Status, full: bool) -> list[str]:
    lines = []
    for channel in status.get("channels", []):
        state = "up" if channel["healthy"] else (
            f"down since {channel['down_since']}" if channel.get("down_since") else "down")
        if channel.get("input_ended"):
            state += " (input ended; answering what it read)"
        error = (f" (last error: {channel['last_error']})"
                 if full and channel.get("last_error") else "")
        lines.append(f"channel {channel['name']}: {state}{error}")
    return lines


def _tasks(status: Status, full: bool) -> list[str]:
    return [task_line(task, full=full) for task in status.get("tasks") or [] if not task["healthy"]]


def _provider(status: Status, full: bool) -> list[str]:
    provider = status.get("provider") or {}
    if not provider.get("configured"):
        return ["provider: none configured (direct commands only; see [provider] in config)"]
    where = f" at {provider['base_url']}" if full else ""
    failing = ""
    if provider.get("failing_since"):
        why = f": {provider['last_error']}" if full and provider.get("last_error") else ""
        failing = f", FAILING since {provider['failing_since']}{why}"
    tokens = [f"  {tokens_line(provider['tokens'])}"] if provider.get("tokens") else []
    return [f"provider: {provider['model']}{where}{failing}", *tokens]


def _sensors(status: Status, full: bool) -> list[str]:
    lines = []
    for sensor in status.get("sensors", []):
        failing = f", FAILING: {sensor['error']}" if sensor.get("error") and full else (
            ", FAILING" if sensor.get("error") else "")
        lines.append(f"sensor {sensor['name']}: {readings_text(sensor['readings'])}{failing}")
    return lines


def _rules(status: Status, full: bool) -> list[str]:
    rules = status.get("rules") or []
    if not rules:
        return []
    errors = [r["name"] for r in rules if r.get("last_error")]
    failed = f", last action failed: {', '.join(errors)}" if errors else ""
    return [f"rules: {len(rules)}, fired {times(sum(r['fired'] for r in rules))}{failed}"]


def _interlocks(status: Status, full: bool) -> list[str]:
    interlocks = status.get("interlocks") or []
    count = [f"interlocks: {len(interlocks)}"] if interlocks else []
    return count + [f"interlock {row['name']} TRIPPED: {row['tripped']}"
                    for row in interlocks if row.get("tripped")]


def _schedules(status: Status, full: bool) -> list[str]:
    jobs = [j for j in status.get("schedules") or [] if j.get("next_run")]
    if not jobs:
        return []
    soonest = min(jobs, key=lambda j: j["next_run"])
    broken = [j["name"] for j in status["schedules"]
              if str(j.get("last_result", "")).startswith("error")]
    failed = f", last run failed: {', '.join(broken)}" if broken else ""
    shown = local_time(soonest["next_run"], soonest.get("timezone") or "UTC",
                       soonest.get("to_the_second", False))  # as `edge-cli schedules` shows it
    return [f"schedules: {len(status['schedules'])}, next {soonest['name']} at {shown}{failed}"]


def _cameras(status: Status, full: bool) -> list[str]:
    lines = []
    for camera in status.get("cameras") or []:
        count = camera.get("snapshots") or 0
        taken = f"{count} picture{'s' if count != 1 else ''} taken" if count else "no picture yet"
        failing = (f", last picture FAILED: {camera['error']}" if full else ", last picture FAILED"
                   ) if camera.get("error") else ""
        lines.append(f"camera {camera['name']} ({camera['type']}): {taken}{failing}")
    return lines


def _memory(status: Status, full: bool) -> list[str]:
    memory = status.get("memory")
    if not memory:
        return []
    count = f"{memory['entries']} entries, " if memory.get("entries") is not None else ""
    where = f" ({memory['path']})" if full else ""
    return [f"memory: {memory['backend']}, {count}{format_bytes(memory['bytes'])}{where}"]


def _storage(status: Status, full: bool) -> list[str]:
    line = storage_line(status.get("storage") or {}, full=full)
    return [line] if line else []


def _mqtt(status: Status, full: bool) -> list[str]:
    mqtt = status.get("mqtt") or {}
    if not (mqtt.get("enabled") and _running(status)):
        return []
    lines = [mqtt_line(mqtt, full=full)]
    if mqtt.get("warning") and full:
        lines.append(f"  warning: {mqtt['warning']}")
    if full and (fleet := fleet_line(mqtt.get("fleet") or {})):
        lines.append(f"  {fleet}")
    return lines


def _mcp(status: Status, full: bool) -> list[str]:
    line = mcp_servers_line(status.get("mcp") or {}, full=full) if _running(status) else None
    return [line] if line else []


def _recent_errors(status: Status, full: bool) -> list[str]:
    errors = status.get("recent_errors") or []
    if errors and not full:
        return [f"{len(errors)} recent warnings or errors (an admin sees them in /status)"]
    if not errors:
        return []
    return [f"last errors ({len(errors)} recent, newest last):",
            *(f"  {moment_ago(e['time'])} {e['level']} {e['logger']}: {e['message']}"
              for e in errors[-RECENT_ERRORS_SHOWN:])]


SECTIONS: tuple[Callable[[Status, bool], list[str]], ...] = (
    _daemon, _last_end, _safe_mode, _config, _boards, _channels, _tasks, _provider, _sensors,
    _rules, _interlocks, _schedules, _cameras, _memory, _storage, _mqtt, _mcp, _recent_errors)
"""The status's sections in the order they are shown: each gives its lines from the status
(``full=False``: what a non-admin sees)."""


def format_status(status: Status, *, full: bool = True) -> str:
    """The status as lines of text; ``full=False`` for a non-admin (see the module's doc)."""
    status = redact_status(status)
    return "\n".join(line for section in SECTIONS for line in section(status, full))
