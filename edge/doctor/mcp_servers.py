"""``[[mcp.servers]]``: one check per server. With the agent running, what it says of the
server (connected since when, its tools, restarts, the last error); without one, a connection
made here that lists the server's tools. A tool in ``allow`` the server does not list is a
warning (a typo offers the model nothing), and so is a tool its caps left out and a stdio server
run without its sandbox (``sandbox = false``); one refused for want of a sandbox fails. Each
says whether the server is sandboxed."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from edge.doctor import Check

if TYPE_CHECKING:
    from edge.config.loader import LoadedConfig
    from edge.config.mcp import McpServerConfig
    from edge.mcp.sandbox import Places

FIX = ("check [[mcp.servers]] name = \"{name}\": that its command runs (try it in a shell) or "
       "its url answers with the headers set; `edge-cli logs` shows mcp_down with the reason")


def running_servers(loaded: LoadedConfig) -> list[dict[str, Any]] | None:
    """The running agent's ``mcp.servers`` rows, or None when no agent answers."""
    from edge.core.exc import EdgeError
    from edge.doctor.agent import agent_status

    try:
        mcp = agent_status(loaded).get("mcp")
    except EdgeError:
        return None
    rows = mcp.get("servers") if isinstance(mcp, dict) else None
    return rows if isinstance(rows, list) else []


def check_mcp_servers(loaded: LoadedConfig | None) -> list[Check]:
    if loaded is None or not loaded.config.mcp.servers:
        return [Check("mcp servers", "skip", "none configured ([[mcp.servers]])")]
    running = running_servers(loaded)
    if running is not None:
        rows = {row.get("name"): row for row in running}
        return [running_check(s.name, rows.get(s.name)) for s in loaded.config.mcp.servers]
    from edge.mcp.sandbox import Places

    return [probe_check(s, Places.of(loaded)) for s in loaded.config.mcp.servers]


SANDBOX_WORDS = {"on": "sandboxed", "off": "UNSANDBOXED (sandbox = false)",
                 "refused": "refused: no sandbox here", "none": "over HTTP (no sandbox)"}
UNSANDBOXED_FIX = ("sandbox = false runs it as the agent's user, able to read the agent's config "
                   "and state: remove it (sudo apt install bubblewrap) and list what the server "
                   "needs in paths and writable_paths")


def running_check(name: str, row: dict[str, Any] | None) -> Check:
    from edge.status_lines import mcp_server_text as server_text

    check = f"mcp server {name}"
    if row is None:
        return Check(check, "warn", "the running agent does not have it yet (restart the agent "
                     "to use a server added since it started)", "edge-cli service restart")
    text = server_text(row)
    sandbox = SANDBOX_WORDS.get(str(row.get("sandbox")), str(row.get("sandbox")))
    said = f"the running agent has it {text.removeprefix(name + ' ')}; {sandbox}"
    if not row.get("connected"):
        return Check(check, "fail", said, FIX.format(name=name))
    if row.get("missing"):
        return Check(check, "warn", said, f"fix the names in allow: the server lists its tools "
                     f"by other names ({', '.join(row['missing'])} are not among them)")
    return _caps_check(check, said, row.get("sandbox"), row.get("warnings") or [])


def _caps_check(check: str, said: str, sandbox: Any, warnings: list[str]) -> Check:
    if warnings:
        return Check(check, "warn", said, "raise the caps in its [[mcp.servers]] (max_tools, "
                     "max_schema_bytes, max_schema_total_bytes) or leave those tools out of allow")
    if sandbox == "off":
        return Check(check, "warn", said, UNSANDBOXED_FIX)
    return Check(check, "ok", said)


def where(server: McpServerConfig) -> str:
    """The command, or the url without credentials, query or fragment (a token may be there).

    >>> from edge.config.mcp import McpServerConfig
    >>> where(McpServerConfig(name="ha", url="https://me:pw@ha.lan:8123/api/mcp?t=x"))
    'https://ha.lan:8123/api/mcp'
    """
    from urllib.parse import urlsplit

    if server.url is None:
        return server.command or ""
    parts = urlsplit(server.url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}"


def probe_check(server: McpServerConfig, places: Places | None = None) -> Check:
    import asyncio

    from edge.mcp.client import RemoteToolError, probe

    check = f"mcp server {server.name}"
    try:
        link = asyncio.run(probe(server, places))
    except RemoteToolError as exc:
        refused = "; refused: no sandbox here" if "no sandbox" in str(exc) else ""
        return Check(check, "fail", f"{where(server)}: {exc}{refused}", FIX.format(name=server.name))
    tools = link.tools
    missing = [t for t in server.allow if t not in tools and t not in link.left_out]
    allowed = len([t for t in server.allow if t in tools])
    said = (f"{where(server)} answers with {len(tools)} tools, {allowed} of them allowed (no "
            f"agent running); {SANDBOX_WORDS[link.sandbox]}")
    if link.warnings:
        said += "; " + "; ".join(link.warnings)
    if missing:
        return Check(check, "warn", said, f"fix the names in allow: the server does not list "
                     f"{', '.join(missing)} (it lists {', '.join(sorted(tools)) or 'none'})")
    return _caps_check(check, said, link.sandbox, link.warnings)
