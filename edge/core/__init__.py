"""The bottom floor: vocabulary and mechanisms every other part of the agent shares, importing
nothing of ``edge`` outside this folder.

| module | what it is |
| --- | --- |
| ``exc`` | the exception tree (every error is an ``EdgeError``, or a ``BoardError`` from peripherals) |
| ``messages`` | chat messages, tool calls and tool specs: what channels, the agent and providers pass |
| ``requester`` | who asks (``telegram:42``, ``schedule:pump``): passed down every call to the pins |
| ``files`` | atomic, durable file writes |
| ``sqlite_files`` | preparing a SQLite file without ever holding a descriptor of it |
| ``ratelimit`` | sliding windows and budgets |
| ``durations`` | ``30s``, ``1h30m``: parsing and limits (finite, floor, ceiling) |
| ``localtime`` | a moment shown in a zone (``2026-11-25 06:00 CET``): a job's next run |
| ``paths`` | the state directory and the runtime directory |
| ``httpclient`` | httpx clients made one way, base URLs |
| ``sse`` | server-sent events |
| ``supervision`` | long-lived tasks restarted with backoff, shown down while they are |
| ``stopsignals`` | which signals stop the agent through its safe state |
| ``sdnotify`` | systemd's notify protocol |
| ``logformat`` | structured log lines |
| ``heap`` | returning freed memory to the system |
| ``validation`` | pydantic's validation errors in our words (every problem, the full key as written) |
| ``redaction`` | secrets kept out of logs, status and errors |
| ``logsetup`` | where log lines go (journal, file, terminal) |
| ``ownership`` | the agent's lock: one agent per state directory |
| ``storage`` | the state directory's health: a full or read-only disk, found and said |
| ``faces`` | a package's lazy face: its names loaded from their modules on first use |

Used by module (``from edge.core.exc import EdgeError``): the face lists the modules and imports
none, so a light command that needs two of them loads only those two.
"""

__all__ = ["durations", "exc", "faces", "files", "heap", "httpclient", "localtime", "logformat",
           "logsetup", "messages", "ownership", "paths", "ratelimit", "redaction", "requester", "sdnotify",
           "sqlite_files", "sse", "stopsignals", "storage", "supervision", "validation"]
