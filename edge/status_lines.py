"""The lines of the status text that other commands show too (``edge-cli mqtt``, ``fleet``,
``models``, doctor): the broker, the fleet, MCP servers, tokens, tasks, storage, and spans of
time in words. :func:`edge.status.format_status` puts them in its sections."""

from __future__ import annotations

import time
from typing import Any


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


def moment_ago(moment: float) -> str:
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
