"""Backups: one archive of what an agent needs to come back on a new SD card (``edge-cli backup``).

- :mod:`~edge.backup.contents`: what the state directory holds, declared once: what goes into an
  archive, what only with ``--secrets``, and what is left out and why.
- :mod:`~edge.backup.archive`: create and verify an archive (a tar.gz with a manifest); databases
  are copied through SQLite's backup API, so a running agent is backed up consistently.
- :mod:`~edge.backup.restore`: put an archive back, never over a running agent's state.
- :mod:`~edge.backup.sealing`: the optional passphrase (Fernet, a key derived with scrypt).
- :mod:`~edge.backup.scheduled`: ``[backup] path``: the agent's own periodic backups, kept ``keep``.
"""

__all__ = ["archive", "contents", "restore", "scheduled", "sealing"]
