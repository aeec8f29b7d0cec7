r"""The ``[[mcp.servers]]`` part of status, as text (no SDK: ``edge-cli status`` reads the
running agent's JSON, where it is ``mcp.servers``).

>>> line = mcp_servers_line({"servers": [
...     {"name": "ha", "connected": True, "since": "2026-01-01T10:00:00",
...      "tools": ["ha.HassTurnOn"], "missing": [], "last_error": None, "restarts": 0},
...     {"name": "notes", "connected": False, "since": "2026-01-01T10:05:00", "tools": [],
...      "missing": [], "last_error": "ConnectionError: refused", "restarts": 3}]})
>>> print(*line.split("; "), sep=";\n")
mcp servers: ha connected since 2026-01-01T10:00:00 (1 tool);
notes DOWN since 2026-01-01T10:05:00 (3 restarts, last error: ConnectionError: refused)
"""

from __future__ import annotations

from typing import Any


def server_text(row: dict[str, Any], *, full: bool = True) -> str:
    """One server: ``ha connected since T (3 tools)`` or ``ha DOWN since T (2 restarts, ...)``."""
    since = f" since {row['since']}" if row.get("since") else ""
    restarts = row.get("restarts") or 0
    if row.get("connected"):
        count = len(row.get("tools") or [])
        notes = [f"{count} tool{'s' if count != 1 else ''}"]
        if row.get("missing") and full:
            notes.append(f"not listed by the server: {', '.join(row['missing'])}")
        if restarts:
            notes.append(f"{restarts} restart{'s' if restarts != 1 else ''}")
        return f"{row['name']} connected{since} ({'; '.join(notes)})"
    notes = [f"{restarts} restart{'s' if restarts != 1 else ''}"] if restarts else []
    if full and row.get("last_error"):
        notes.append(f"last error: {row['last_error']}")
    said = f" ({', '.join(notes)})" if notes else ""
    return f"{row['name']} DOWN{since}{said}"


def mcp_servers_line(mcp: dict[str, Any], *, full: bool = True) -> str | None:
    """``mcp servers: ha connected ...; notes DOWN ...``, or None without servers."""
    rows = mcp.get("servers") or []
    if not rows:
        return None
    return "mcp servers: " + "; ".join(server_text(r, full=full) for r in rows)
