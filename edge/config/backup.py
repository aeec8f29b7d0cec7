"""``[backup]``: the agent's own backups, to a folder (a USB stick, a NAS mount), every ``every``,
the newest ``keep`` kept. Unset ``path``: no scheduled backups (``edge-cli backup create`` still
works). An archive is what ``edge-cli backup create`` writes (:mod:`edge.backup.archive`).

>>> BackupConfig().enabled
False
>>> BackupConfig(path="/mnt/usb/edge-backups", every="12h").every_seconds
43200.0
>>> from pydantic import ValidationError
>>> try:
...     BackupConfig(path="/mnt/usb", every="1s")
... except ValidationError as exc:
...     print(exc.errors()[0]["msg"])
Value error, must be at least 1h (got '1s')
"""

from __future__ import annotations

from pydantic import Field, SecretStr, field_validator

from edge.config.section import Section
from edge.core.durations import parse_duration

MIN_EVERY_SECONDS = 3600.0
"""The shortest interval between scheduled backups: each copies every database whole."""


class BackupConfig(Section):
    """Scheduled backups, and the passphrase every backup is sealed with."""

    path: str | None = None
    """The folder scheduled backups go to (``/mnt/usb/edge-backups``); unset: none are taken."""
    every: str = "1d"
    """How often: a duration (``12h``, ``1d``, ``7d``), at least 1h."""
    keep: int = Field(default=7, ge=1)
    """How many of the newest archives in ``path`` are kept; older ones are deleted."""
    secrets: bool = False
    """Also back up the environment file, pairing codes, fleet keys and chat sessions."""
    passphrase: SecretStr | None = None
    """Seal every backup with this passphrase (``edge-cli backup`` uses it too). Set it in the
    environment file (``EDGE_BACKUP__PASSPHRASE=...`` in /etc/edge-agent/env), not here."""

    @field_validator("every")
    @classmethod
    def _every(cls, text: str) -> str:
        parse_duration(text, at_least=MIN_EVERY_SECONDS)
        return text

    @property
    def enabled(self) -> bool:
        return bool(self.path)

    @property
    def every_seconds(self) -> float:
        return parse_duration(self.every, at_least=MIN_EVERY_SECONDS)
