"""Human-readable status, shared by ``edge-cli status`` and the ``/status`` command (no heavy imports)."""

from __future__ import annotations


def format_duration(seconds: float) -> str:
    seconds = int(seconds)
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}d {hours}h {minutes}m"
    if hours:
        return f"{hours}h {minutes}m"
    return f"{minutes}m {secs}s" if minutes else f"{secs}s"


def format_status(status: dict) -> str:
    daemon = status.get("daemon") or {}
    if daemon.get("running"):
        lines = [f"edge-agent {daemon.get('version')}: running (pid {daemon.get('pid')}, "
                 f"up {format_duration(daemon.get('uptime_seconds', 0))})"]
    else:
        lines = [f"edge-agent {daemon.get('version')}: daemon not running "
                 "(start it with `edge-cli run` or `systemctl start edge-agent`)"]
    lines.append(f"config: {status.get('config', '?')}")
    for board in status.get("boards", []):
        state = "connected" if board["connected"] else "not connected"
        lines.append(f"board {board['name']} ({board['kind']}): {state}, {board['detail']}")
    for channel in status.get("channels", []):
        state = "up" if channel["healthy"] else (
            f"down since {channel['down_since']}" if channel.get("down_since") else "down")
        error = f" (last error: {channel['last_error']})" if channel.get("last_error") else ""
        lines.append(f"channel {channel['name']}: {state}{error}")
    provider = status.get("provider") or {}
    if provider.get("configured"):
        lines.append(f"provider: {provider['model']} at {provider['base_url']}")
    else:
        lines.append("provider: none configured (direct commands only; see [provider] in config)")
    return "\n".join(lines)
