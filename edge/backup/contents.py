"""What the state directory holds, declared in one place: every file an agent keeps there is
either backed up (some only with ``--secrets``) or left out for a stated reason.
``tests/backup/test_contents.py`` runs a full agent and fails when its state directory holds a
file this list does not name: a new kind of state is then added here, not forgotten.

>>> classify("memory/brain.db").kind, classify("fleet-keys.json").secret
('sqlite', True)
>>> classify("control.sock") is None, classify("models/minilm.onnx") is None
(True, True)
>>> classify("something-new.json")
Traceback (most recent call last):
...
LookupError: something-new.json: a state file edge.backup.contents does not declare
"""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Literal

Kind = Literal["sqlite", "file"]

ENV_FILE = Path("/etc/edge-agent/env")
"""Where deploy/install.sh keeps the service's secrets (``--secrets`` backs it up)."""


@dataclass(frozen=True)
class Kept:
    """Files under ``pattern`` (relative to the state directory, ``fnmatch``: ``*`` crosses
    ``/``) go into an archive: SQLite databases through the backup API, others as they are."""

    pattern: str
    why: str
    secret: bool = False
    """Only with ``--secrets``: keys, pairing codes, conversations."""

    @property
    def kind(self) -> Kind:
        return "sqlite" if self.pattern.endswith(".db") else "file"


@dataclass(frozen=True)
class Left:
    """Files under ``pattern`` are left out of an archive, for ``why``."""

    pattern: str
    why: str


KEPT: tuple[Kept, ...] = (
    Kept("audit.db", "the audit trail: every actuation, refusal, auto-off and safe state"),
    Kept("readings.db", "the sensors' history"),
    Kept("memory/brain.db", "long-term memory (sqlite backend)"),
    Kept("memory/*.db", "other memory databases"),
    Kept("memory/*", "long-term memory (markdown backend) and its files"),
    Kept("MEMORY_SNAPSHOT.md", "the memory snapshot"),
    Kept("schedules.json", "jobs added at runtime (chat, the model's tools)"),
    Kept("workspace/*", "the agent's workspace"),
    Kept("mqtt-client-id", "this node's MQTT client id, so the broker sees the same client"),
    Kept("pairing.json", "outstanding pairing codes (hashed)", secret=True),
    Kept("fleet-keys.json", "keys shared with other agents", secret=True),
    Kept("sessions/*", "chat sessions: what people said to the agent", secret=True),
)
"""What an archive holds; the first pattern a path matches decides."""

LEFT: tuple[Left, ...] = (
    Left("*-wal", "part of its database, copied through the backup API"),
    Left("*-shm", "part of its database, copied through the backup API"),
    Left("*-journal", "part of its database, copied through the backup API"),
    Left("control.sock", "the running agent's socket"),
    Left("agent.lock", "the running agent's lock"),
    Left("backups/*", "earlier backups"),
    Left("models/*", "the embedding model's cache, prepared again on first use"),
    Left("memory/models/*", "the embedding model's cache, prepared again on first use"),
    Left("mcp-scratch/*", "MCP servers' scratch space"),
    Left("voice/*", "voice notes waiting to be transcribed"),
    Left("telegram/*", "Telegram's update offset: the new agent starts at the next update"),
    Left("runs.json", "this machine's crash-loop ledger (safe mode)"),
    Left("token-usage.json", "today's token spend"),
    Left("one-shot-*.json", "one-shot commands' rate windows"),
    Left("*.log", "logs"),
    Left("*.log.*", "rotated logs"),
    Left("*.tmp", "a file being written"),
    Left(".*", "a file being written (atomic writes' temporary names)"),
    Left("*/.*", "a file being written (atomic writes' temporary names)"),
)
"""What an archive leaves out; checked before :data:`KEPT`."""


def classify(relative: str) -> Kept | None:
    """The declaration of the state file at ``relative``: its :class:`Kept`, or None when it is
    left out; LookupError for a file nothing here declares."""
    if any(fnmatchcase(relative, left.pattern) for left in LEFT):
        return None
    for kept in KEPT:
        if fnmatchcase(relative, kept.pattern):
            return kept
    raise LookupError(f"{relative}: a state file edge.backup.contents does not declare")
