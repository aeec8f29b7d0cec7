"""Durable *Always*: what an admin answered *Always* for, kept in ``<state>/approvals.json``
(mode 0600, written atomically) so that it outlives a restart, listed and revoked with
``edge-cli approvals``.

A grant is keyed by the verified identity of who asked (``telegram:42``, ``token:claude``, never
a name a caller gives itself), the target (``gpio:GPIO17``) and the action (``write``), and says
who granted it and when. The running agent reads the file again whenever it changes, so a grant
revoked from the command line asks again at once.

>>> import tempfile, pathlib
>>> store = ApprovalStore(pathlib.Path(tempfile.mkdtemp()) / "approvals.json")
>>> grant = store.grant("token:claude", "gpio:GPIO17", "write", "telegram:1")
>>> store.covers("token:claude", "gpio:GPIO17", "write"), store.covers("token:x", "gpio:GPIO17", "write")
(True, False)
>>> store.revoke(grant.id) == grant, store.covers("token:claude", "gpio:GPIO17", "write")
(True, False)
"""

from __future__ import annotations

import json
import logging
import secrets
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from edge.core.files import write_atomically

__all__ = ["APPROVALS_FILE", "ApprovalStore", "Grant"]

APPROVALS_FILE = "approvals.json"
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Grant:
    """One durable *Always*."""

    id: str
    identity: str
    """Who may act without asking, as verified (``telegram:42``, ``token:claude``)."""
    target: str
    """What on (``gpio:GPIO17``, ``schedule:water``)."""
    action: str
    """Which action (``write``, ``pwm``, ``schedule``)."""
    granted_by: str
    """The admin who answered *Always* (``telegram:1``)."""
    granted_at: str
    """When, ISO 8601 in UTC, to the second."""


class ApprovalStore:
    """The grants in one file; an absent file holds none."""

    def __init__(self, path: Path):
        self.path = path
        self._grants: list[Grant] = []
        self._seen: tuple[int, int] | None = None

    def _stamp(self) -> tuple[int, int] | None:
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            return None
        return stat.st_mtime_ns, stat.st_size

    def grants(self) -> list[Grant]:
        """Every grant, read again if the file changed since last read."""
        stamp = self._stamp()
        if stamp != self._seen:
            self._grants = self._read() if stamp is not None else []
            self._seen = stamp
        return list(self._grants)

    def _read(self) -> list[Grant]:
        try:
            rows = json.loads(self.path.read_text(encoding="utf-8"))
            return [Grant(**row) for row in rows]
        except (OSError, ValueError, TypeError) as exc:  # unreadable: nothing is granted
            log.warning("approvals_unreadable path=%s error=%r", self.path, exc)
            return []

    def _write(self, grants: list[Grant]) -> None:
        write_atomically(self.path, json.dumps([asdict(g) for g in grants], indent=1) + "\n")
        self._grants, self._seen = grants, self._stamp()

    def covers(self, identity: str, target: str, action: str) -> bool:
        """Whether an admin granted ``identity`` *Always* for ``action`` on ``target``."""
        return any((g.identity, g.target, g.action) == (identity, target, action)
                   for g in self.grants())

    def grant(self, identity: str, target: str, action: str, granted_by: str) -> Grant:
        """Remember *Always* for ``identity`` (one grant per identity, target and action)."""
        grants = [g for g in self.grants()
                  if (g.identity, g.target, g.action) != (identity, target, action)]
        made = Grant(secrets.token_hex(3), identity, target, action, granted_by,
                     datetime.now(UTC).replace(microsecond=0).isoformat())
        self._write([*grants, made])
        log.info("approval_granted id=%s identity=%s target=%s action=%s by=%s", made.id,
                 identity, target, action, granted_by)
        return made

    def revoke(self, grant_id: str) -> Grant | None:
        """Forget grant ``grant_id``; None when there is no such grant."""
        grants = self.grants()
        gone = next((g for g in grants if g.id == grant_id.strip().lower()), None)
        if gone is not None:
            self._write([g for g in grants if g is not gone])
            log.info("approval_revoked id=%s identity=%s target=%s", gone.id, gone.identity,
                     gone.target)
        return gone
