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

import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from edge.core.redaction import Redactor

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


def mqtt_line(mqtt: dict[str, Any], *, full: bool = True) -> str:
    """``mqtt: connected to URL as NODE since T`` or ``mqtt: NOT CONNECTED since T (last error)``.

    >>> mqtt_line({"enabled": True, "connected": False, "url": "mqtt://b:1883", "node_id": "pi",
    ...            "since": "2026-01-01T10:00:00", "last_error": "refused"})
    'mqtt: NOT CONNECTED to mqtt://b:1883 (node pi) since 2026-01-01T10:00:00, last error: refused'
    """
    where = f" to {mqtt.get('url')}" if full and mqtt.get("url") else ""
    node = f" (node {mqtt['node_id']})" if mqtt.get("node_id") else ""
    since = f" since {mqtt['since']}" if mqtt.get("since") else ""
    if mqtt.get("connected"):
        return f"mqtt: connected{where}{node}{since}"
    error = f", last error: {mqtt['last_error']}" if full and mqtt.get("last_error") else ""
    return f"mqtt: NOT CONNECTED{where}{node}{since}{error}"


def fleet_line(fleet: dict[str, Any]) -> str | None:
    """``fleet: paired with shed; dropped unanswered: unverified 3`` (clocks apart, forgeries).

    >>> print(fleet_line({"requests": {"paired": ["shed"], "dropped_why": {"unverified": 3}},
    ...                   "forged_answers": 1, "nodes": {"shed": {"clock_offset_ms": 4200,
    ...                                                           "clock_warning": True}}}))
    ... # doctest: +NORMALIZE_WHITESPACE
    fleet: paired with shed; dropped unanswered: unverified 3; 1 forged answer ignored;
    node shed's clock is +4.2 s from this one's
    """
    if not fleet:
        return None
    requests = fleet.get("requests") or {}
    paired = requests.get("paired") or []
    parts = [f"paired with {', '.join(paired)}" if paired else "paired with no agent"]
    if dropped := requests.get("dropped_why"):
        parts.append("dropped unanswered: " + ", ".join(f"{why} {n}" for why, n in
                                                         sorted(dropped.items())))
    if forged := fleet.get("forged_answers"):
        parts.append(f"{forged} forged answer{'s' if forged != 1 else ''} ignored")
    for name, node in sorted((fleet.get("nodes") or {}).items()):
        if not node.get("paired", True):
            parts.append(f"NOT PAIRED with node {name}")
        if node.get("clock_warning"):
            parts.append(f"node {name}'s clock is {node['clock_offset_ms'] / 1000:+.1f} s from "
                         "this one's")
    return "fleet: " + "; ".join(parts)


def mcp_server_text(row: dict[str, Any], *, full: bool = True) -> str:
    """One server: ``ha connected since T (3 tools)`` or ``ha DOWN since T (2 restarts, ...)``."""
    since = f" since {row['since']}" if row.get("since") else ""
    restarts = row.get("restarts") or 0
    if row.get("connected"):
        count = len(row.get("tools") or [])
        notes = [f"{count} tool{'s' if count != 1 else ''}"]
        if row.get("missing") and full:
            notes.append(f"not listed by the server: {', '.join(row['missing'])}")
        if row.get("sandbox") == "off":
            notes.append("unsandboxed")
        if row.get("warnings"):
            notes.append("; ".join(row["warnings"]) if full else
                         f"{len(row['warnings'])} warning{'s' if len(row['warnings']) != 1 else ''}")
        if restarts:
            notes.append(f"{restarts} restart{'s' if restarts != 1 else ''}")
        return f"{row['name']} connected{since} ({'; '.join(notes)})"
    notes = [f"{restarts} restart{'s' if restarts != 1 else ''}"] if restarts else []
    if full and row.get("last_error"):
        notes.append(f"last error: {row['last_error']}")
    said = f" ({', '.join(notes)})" if notes else ""
    return f"{row['name']} DOWN{since}{said}"


def mcp_servers_line(mcp: dict[str, Any], *, full: bool = True) -> str | None:
    """``mcp servers: ha connected ...; notes DOWN ...`` (the ``[[mcp.servers]]`` part of the
    running agent's status), or None without servers.

    >>> line = mcp_servers_line({"servers": [
    ...     {"name": "ha", "connected": True, "since": "2026-01-01T10:00:00",
    ...      "tools": ["ha.HassTurnOn"], "missing": [], "last_error": None, "restarts": 0},
    ...     {"name": "notes", "connected": False, "since": "2026-01-01T10:05:00", "tools": [],
    ...      "missing": [], "last_error": "ConnectionError: refused", "restarts": 3}]})
    >>> print(*line.split("; "), sep=";\\n")
    mcp servers: ha connected since 2026-01-01T10:00:00 (1 tool);
    notes DOWN since 2026-01-01T10:05:00 (3 restarts, last error: ConnectionError: refused)
    """
    rows = mcp.get("servers") or []
    if not rows:
        return None
    return "mcp servers: " + "; ".join(mcp_server_text(r, full=full) for r in rows)


def tokens_line(tokens: dict[str, Any]) -> str:
    """Today's model use (:mod:`edge.agent.budget`), for status and ``edge-cli models``.

    >>> tokens_line({"used": 1200, "budget": 50000, "per_user_budget": None, "resets_at": "00:00"})
    'tokens today: 1200 of 50000 (resets at 00:00)'
    """
    of = f" of {tokens['budget']}" if tokens.get("budget") else ""
    per = f", at most {tokens['per_user_budget']} per person" if tokens.get("per_user_budget") else ""
    return f"tokens today: {tokens['used']}{of}{per} (resets at {tokens['resets_at']})"


def task_line(task: dict[str, Any], *, full: bool = True) -> str:
    """A supervised task that is down (status shows no line for those that run).

    >>> task_line({"name": "scheduler", "healthy": False, "down_since": "2026-01-01T10:00:00",
    ...            "restarts": 2, "last_error": "RuntimeError: boom"})
    'task scheduler: DOWN since 2026-01-01T10:00:00, restarted 2 times (last error: RuntimeError: boom)'
    """
    since = f" since {task['down_since']}" if task.get("down_since") else ""
    restarts = f", restarted {times(task['restarts'])}" if task.get("restarts") else ""
    error = f" (last error: {task['last_error']})" if full and task.get("last_error") else ""
    return f"task {task['name']}: DOWN{since}{restarts}{error}"


SPAN_UNITS = (("d", 86400), ("h", 3600), ("min", 60), ("s", 1))


def span(seconds: float) -> str:
    """A length of time as people read it, in its two largest units, whole seconds.

    >>> span(0.003), span(3.4), span(125), span(3 * 3600 + 61), span(2 * 86400 + 7200 + 5)
    ('less than a second', '3 s', '2 min 5 s', '3 h 1 min', '2 d 2 h')
    """
    rest = round(max(0.0, seconds))
    if rest == 0:
        return "less than a second"
    parts: list[tuple[int, str]] = []
    for unit, size in SPAN_UNITS:
        count, rest = divmod(rest, size)
        if count or parts:
            parts.append((count, unit))
    return " ".join(f"{count} {unit}" for count, unit in parts[:2] if count)


def ago(seconds: float) -> str:
    """How long ago something was, ``seconds`` ago.

    >>> ago(0.00296497), ago(3), ago(125)
    ('just now', '3 s ago', '2 min 5 s ago')
    """
    return "just now" if seconds < 0.5 else f"{span(seconds)} ago"


def times(count: int) -> str:
    """``once``, ``2 times``.

    >>> times(1), times(0), times(3)
    ('once', '0 times', '3 times')
    """
    return "once" if count == 1 else f"{count} times"


def _ago(moment: float) -> str:
    """How long ago ``moment`` (epoch seconds) was."""
    return ago(time.time() - moment)


def storage_line(storage: dict[str, Any], *, full: bool = True) -> str | None:
    """The status's line: None while all is well.

    >>> storage_line({"state": "full", "since": "2026-05-01 07:00:00", "path": "/s/audit.db",
    ...               "audit_missing": 3, "audit_missing_since": "2026-05-01 07:00:01"})
    'storage: full since 2026-05-01 07:00:00 (/s/audit.db); audit: 3 rows not recorded since 2026-05-01 07:00:01'
    """
    parts = []
    if storage.get("state", "ok") != "ok":
        where = f" ({storage['path']})" if full and storage.get("path") else ""
        parts.append(f"storage: {storage['state']} since {storage['since']}{where}")
    if storage.get("audit_missing"):
        parts.append(f"audit: {storage['audit_missing']} rows not recorded since "
                     f"{storage['audit_missing_since']}")
    return "; ".join(parts) or None


def format_status(status: dict[str, Any], *, full: bool = True) -> str:
    """The status as lines of text; ``full=False`` for a non-admin (see the module's doc)."""
    status = redact_status(status)
    daemon = status.get("daemon") or {}
    if daemon.get("running"):
        lines = [f"edge-agent {daemon.get('version')}: running (pid {daemon.get('pid')}, "
                 f"up {span(daemon.get('uptime_seconds', 0))})"]
    else:
        lines = [f"edge-agent {daemon.get('version')}: daemon not running "
                 "(start it with `edge-cli run` or `systemctl start edge-agent`)"]
    last_end = status.get("last_end")
    if last_end:
        reason = last_end["reason"] if full or last_end.get("killed_for_memory") else "not clean"
        lines.append(f"last end: {reason} at {last_end['at'].replace('T', ' ')}")
    safe = status.get("safe_mode")
    if safe:
        last = f" (last: {safe['reason']})" if full else ""
        lines.append(f"SAFE MODE since {safe['since']}: {safe['ends']} abnormal ends in 10 "
                     f"minutes{last}; rules and schedules held, model turns refused; leave it "
                     "with `edge-cli resume` or an admin's /resume")
    if full:
        lines.append(f"config: {status.get('config', '?')}")
    for board in status.get("boards", []):
        state = "connected" if board["connected"] else "not connected"
        detail = f", {board['detail']}" if full else ""
        lines.append(f"board {board['name']} ({board['kind']}): {state}{detail}")
        warning = (board.get("info") or {}).get("warning")
        if warning and full:
            lines.append(f"  warning: {warning}")
    for event in (status.get("board_events") or [])[-3:]:
        ago = _ago(event["time"])
        where = f" {event['shown']}" if event.get("shown") else (
            f" {event['pin']}={event['value']:g}" if event.get("pin") else "")
        lines.append(f"  {ago}: {event['board']} {event['kind']}{where}")
    for channel in status.get("channels", []):
        state = "up" if channel["healthy"] else (
            f"down since {channel['down_since']}" if channel.get("down_since") else "down")
        if channel.get("input_ended"):
            state += " (input ended; answering what it read)"
        error = (f" (last error: {channel['last_error']})"
                 if full and channel.get("last_error") else "")
        lines.append(f"channel {channel['name']}: {state}{error}")
    lines.extend(task_line(task, full=full) for task in status.get("tasks") or []
                 if not task["healthy"])
    provider = status.get("provider") or {}
    if provider.get("configured"):
        where = f" at {provider['base_url']}" if full else ""
        failing = ""
        if provider.get("failing_since"):
            why = f": {provider['last_error']}" if full and provider.get("last_error") else ""
            failing = f", FAILING since {provider['failing_since']}{why}"
        lines.append(f"provider: {provider['model']}{where}{failing}")
        if provider.get("tokens"):
            lines.append(f"  {tokens_line(provider['tokens'])}")
    else:
        lines.append("provider: none configured (direct commands only; see [provider] in config)")
    for sensor in status.get("sensors", []):
        values = readings_text(sensor["readings"])
        failing = f", FAILING: {sensor['error']}" if sensor.get("error") and full else (
            ", FAILING" if sensor.get("error") else "")
        lines.append(f"sensor {sensor['name']}: {values}{failing}")
    rules = status.get("rules") or []
    if rules:
        fired = sum(r["fired"] for r in rules)
        errors = [r["name"] for r in rules if r.get("last_error")]
        failed_rules = f", last action failed: {', '.join(errors)}" if errors else ""
        lines.append(f"rules: {len(rules)}, fired {times(fired)}{failed_rules}")
    interlocks = status.get("interlocks") or []
    if interlocks:
        lines.append(f"interlocks: {len(interlocks)}")
    lines.extend(f"interlock {row['name']} TRIPPED: {row['tripped']}"
                 for row in interlocks if row.get("tripped"))
    jobs = [j for j in status.get("schedules") or [] if j.get("next_run")]
    if jobs:
        soonest = min(jobs, key=lambda j: j["next_run"])
        broken = [j["name"] for j in status["schedules"]
                  if str(j.get("last_result", "")).startswith("error")]
        failed = f", last run failed: {', '.join(broken)}" if broken else ""
        shown = soonest["next_run"][:19 if soonest.get("to_the_second") else 16]
        lines.append(f"schedules: {len(status['schedules'])}, next {soonest['name']} at "
                     f"{shown.replace('T', ' ')} UTC{failed}")
    for camera in status.get("cameras") or []:
        count = camera.get("snapshots") or 0
        taken = f"{count} picture{'s' if count != 1 else ''} taken" if count else "no picture yet"
        failing = (f", last picture FAILED: {camera['error']}" if full else ", last picture FAILED"
                   ) if camera.get("error") else ""
        lines.append(f"camera {camera['name']} ({camera['type']}): {taken}{failing}")
    memory = status.get("memory")
    if memory:
        count = f"{memory['entries']} entries, " if memory.get("entries") is not None else ""
        where = f" ({memory['path']})" if full else ""
        lines.append(f"memory: {memory['backend']}, {count}{format_bytes(memory['bytes'])}"
                     f"{where}")
    if storage := storage_line(status.get("storage") or {}, full=full):
        lines.append(storage)
    mqtt = status.get("mqtt") or {}
    if mqtt.get("enabled") and daemon.get("running"):
        lines.append(mqtt_line(mqtt, full=full))
        if mqtt.get("warning") and full:
            lines.append(f"  warning: {mqtt['warning']}")
        if full and (fleet := fleet_line(mqtt.get("fleet") or {})):
            lines.append(f"  {fleet}")
    if daemon.get("running") and (line := mcp_servers_line(status.get("mcp") or {}, full=full)):
        lines.append(line)
    errors = status.get("recent_errors") or []
    if errors and not full:
        lines.append(f"{len(errors)} recent warnings or errors (an admin sees them in /status)")
    elif errors:
        lines.append(f"last errors ({len(errors)} recent, newest last):")
        for event in errors[-RECENT_ERRORS_SHOWN:]:
            ago = _ago(event["time"])
            lines.append(f"  {ago} {event['level']} {event['logger']}: {event['message']}")
    return "\n".join(lines)
