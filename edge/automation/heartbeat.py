"""The heartbeat (seed 000): every ``interval_seconds`` it looks at the boards, channels, sensors
and the agent's supervised tasks (:mod:`edge.core.supervision`), and tells the admins when one has been
down longer than ``down_after_seconds``, and once more when it is back. Nothing is said about a
blip shorter than that. The heartbeat is a supervised task itself: if looking fails, the failure is
logged with its traceback and it looks again after a backoff.

>>> beat = Heartbeat(lambda: {}, None, down_after=60)
>>> beat.observe({"board uno": "unplugged"}, now=0), beat.observe({"board uno": "unplugged"}, now=60)
([], ['board uno is down (for 1 min): unplugged'])
>>> beat.observe({}, now=100)
['board uno is back (it was down for 1 min 40 s)']

Spans read the way status writes them (:func:`edge.status.span`), not as raw seconds:

>>> blip = Heartbeat(lambda: {}, None, down_after=0)
>>> blip.observe({"task mqtt": "reset"}, now=5.0), blip.observe({}, now=5.0029)
(['task mqtt is down (for less than a second): reset'], ['task mqtt is back (it was down for less than a second)'])
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable, Mapping

from edge.automation.actions import Notifier
from edge.status_lines import span

log = logging.getLogger(__name__)

Probe = Callable[[], Mapping[str, str]]
"""What is down now: component (``board uno``, ``channel telegram``, ``sensor soil``, ``task
scheduler``) -> why."""


class Heartbeat:
    def __init__(self, probe: Probe, notifier: Notifier | None, *, down_after: float,
                 interval: float = 30.0, targets: Iterable[str] = ("admins",),
                 clock: Callable[[], float] = time.monotonic):
        self.probe, self.notifier = probe, notifier
        self.down_after, self.interval, self.targets = down_after, interval, tuple(targets)
        self.clock = clock
        self._down_since: dict[str, float] = {}
        self._reported: set[str] = set()

    def observe(self, down: Mapping[str, str], now: float) -> list[str]:
        """The notices this look at the world calls for."""
        notices = []
        for component, why in down.items():
            since = self._down_since.setdefault(component, now)
            if component not in self._reported and now - since >= self.down_after:
                self._reported.add(component)
                notices.append(f"{component} is down (for {span(now - since)}): {why}")
                log.warning("heartbeat_down component=%r since=%.0fs reason=%r", component,
                            now - since, why)
        for component in [c for c in self._down_since if c not in down]:
            since = self._down_since.pop(component)
            if component in self._reported:
                self._reported.discard(component)
                notices.append(f"{component} is back (it was down for {span(now - since)})")
                log.info("heartbeat_up component=%r after=%.0fs", component, now - since)
        return notices

    def down(self) -> dict[str, float]:
        """Components down now, with how long, for status."""
        now = self.clock()
        return {c: round(now - since, 1) for c, since in self._down_since.items()}

    async def run(self) -> None:
        """Look, and tell, every ``interval`` seconds until cancelled (the agent supervises it)."""
        while True:
            notices = self.observe(self.probe(), self.clock())
            if notices and self.notifier is not None:
                await self.notifier.notify(self.targets, "\n".join(notices))
            await asyncio.sleep(self.interval)
