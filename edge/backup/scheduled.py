"""``[backup] path``: the agent backs itself up there every ``every`` and keeps the newest
``keep`` archives, as a supervised task (``backup`` in ``edge-cli status``; a folder that cannot
be written, an unplugged stick, shows it down with the error, and it is tried again).

The next backup is due ``every`` after the newest archive in the folder, so a restart does not
take one more; a folder with none takes one at once. Each is logged:
``backup_written path=/mnt/usb/edge-backups/edge-backup-pi-20261129-070000.tar.gz files=7
bytes=1843200 removed=1``.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from edge.backup.archive import create_backup, default_name
from edge.backup.contents import ENV_FILE
from edge.config.backup import BackupConfig

log = logging.getLogger(__name__)

ARCHIVE_GLOB = "edge-backup-*.tar.gz*"


class ScheduledBackups:
    def __init__(self, config: BackupConfig, state_dir: Path, config_path: Path | None,
                 env_file: Path = ENV_FILE, clock: Callable[[], float] = time.time):
        assert config.path, "scheduled backups need [backup] path"
        self.folder = Path(config.path).expanduser()
        self.config = config
        self.state_dir = state_dir
        self.config_path = config_path
        self.env_file = env_file
        self.clock = clock

    def archives(self) -> list[Path]:
        """The archives in the folder, oldest first."""
        if not self.folder.is_dir():
            return []
        return sorted(self.folder.glob(ARCHIVE_GLOB), key=lambda p: (p.stat().st_mtime, p.name))

    def due_in(self) -> float:
        """Seconds until the next backup is due (0: now)."""
        found = self.archives()
        if not found:
            return 0.0
        return max(0.0, found[-1].stat().st_mtime + self.config.every_seconds - self.clock())

    def take(self) -> Path:
        """Write one archive and remove the oldest beyond ``keep`` (blocking: run in a thread)."""
        phrase = self.config.passphrase.get_secret_value() if self.config.passphrase else None
        now = self.clock()
        destination = self.folder / default_name(datetime.fromtimestamp(now, UTC), phrase is not None)
        manifest = create_backup(destination, state_dir=self.state_dir, config=self.config_path,
                                 env_file=self.env_file, secrets=self.config.secrets,
                                 passphrase=phrase)
        os.utime(destination, (now, now))  # its time is when it was taken, by this clock
        found = self.archives()
        old = found[:-self.config.keep]
        for path in old:
            path.unlink(missing_ok=True)
        log.info("backup_written path=%s files=%d bytes=%d removed=%d", destination,
                 len(manifest.files), destination.stat().st_size, len(old))
        return destination

    async def run(self) -> None:
        """The supervised loop: wait until due, back up in a thread, again."""
        while True:
            await asyncio.sleep(self.due_in())
            await asyncio.to_thread(self.take)
