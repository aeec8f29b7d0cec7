"""Memory upkeep on a schedule: delete Conversation memories
older than the retention, write Core memories to ``MEMORY_SNAPSHOT.md``, and re-embed entries
whose vectors are missing or come from another model (once the model is loaded).

The daemon runs ``hygiene_loop`` as a supervised task (``memory-hygiene``, restarted after a
failure, :mod:`edge.core.supervision`): a minute after start (start-up and the first replies
do not compete with upkeep on an SD card), then every ``hygiene_interval_hours``. A one-shot
``edge-cli run`` ends before that: upkeep is the service's work.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from edge.core.exc import EdgeError
from edge.memory.base import Category, Memory
from edge.memory.snapshot import write_snapshot

if TYPE_CHECKING:
    from edge.config.model import MemoryConfig

log = logging.getLogger(__name__)


@dataclass
class HygieneReport:
    conversations_deleted: int = 0
    snapshot_entries: int | None = None
    reindexed: int = 0

    def as_dict(self) -> dict[str, int | None]:
        return asdict(self)


def retention_cutoff(days: int, now: datetime | None = None) -> str:
    moment = (now or datetime.now(UTC)) - timedelta(days=days)
    return moment.isoformat(timespec="microseconds")


async def run_hygiene(memory: Memory, config: MemoryConfig, snapshot_path: Path,
                      now: datetime | None = None) -> HygieneReport:
    """One pass; ``config`` is a MemoryConfig. A backend without a step does nothing in it
    (the defaults of ``delete_older_than`` and ``model_ready``: markdown keeps everything)."""
    report = HygieneReport()
    cutoff = retention_cutoff(config.conversation_retention_days, now)
    report.conversations_deleted = await memory.delete_older_than(Category.CONVERSATION, cutoff)
    if config.snapshot_on_hygiene and memory.name != "none":
        report.snapshot_entries = await write_snapshot(memory, snapshot_path)
    if memory.model_ready:
        report.reindexed = await memory.reindex(only_stale=True)
    log.info("memory_hygiene conversations_deleted=%d snapshot_entries=%s reindexed=%d",
             report.conversations_deleted, report.snapshot_entries, report.reindexed)
    return report


HYGIENE_START_DELAY_SECONDS = 60.0


async def hygiene_loop(memory: Memory, config: MemoryConfig, snapshot_path: Path,
                       first_delay: float = HYGIENE_START_DELAY_SECONDS) -> None:
    """Run hygiene after ``first_delay`` seconds, then every ``config.hygiene_interval_hours``,
    until cancelled."""
    await asyncio.sleep(first_delay)
    while True:
        try:
            await run_hygiene(memory, config, snapshot_path)
        except EdgeError as exc:
            log.warning("memory_hygiene_failed reason=%s", exc)
        await asyncio.sleep(config.hygiene_interval_hours * 3600)
