"""A sliding-window rate limiter: at most N events per key in the last ``window`` seconds.

Used by the pin policy (actuations per caller) and the channel preflight (model turns per
sender). Keys whose window has emptied are forgotten, so a stream of strangers cannot grow it
without bound.

>>> now = [0.0]
>>> limiter = SlidingWindow(60.0, clock=lambda: now[0])
>>> [limiter.take("telegram:42", limit=2) for _ in range(3)]
[True, True, False]
>>> now[0] = 60.0
>>> limiter.take("telegram:42", limit=2), limiter.count("telegram:42")
(True, 1)
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable

MAX_KEYS = 10_000
"""Beyond this many keys with events in their window, the oldest key is dropped."""


class SlidingWindow:
    def __init__(self, window: float, clock: Callable[[], float] = time.monotonic):
        self.window = window
        self._clock = clock
        self._events: dict[str, deque[float]] = {}

    def _recent(self, key: str, now: float) -> deque[float] | None:
        events = self._events.get(key)
        if events is None:
            return None
        while events and now - events[0] >= self.window:
            events.popleft()
        if not events:
            del self._events[key]
            return None
        return events

    def count(self, key: str) -> int:
        """Events for ``key`` in the current window."""
        events = self._recent(key, self._clock())
        return len(events) if events else 0

    def take(self, key: str, limit: int) -> bool:
        """Record an event for ``key`` if fewer than ``limit`` are in the window; False if not."""
        now = self._clock()
        events = self._recent(key, now)
        if events is not None and len(events) >= limit:
            return False
        if events is None:
            if len(self._events) >= MAX_KEYS:
                del self._events[next(iter(self._events))]
            events = self._events[key] = deque()
        events.append(now)
        return True
