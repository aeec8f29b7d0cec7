"""A sliding-window rate limiter: at most N events per key in the last ``window`` seconds.

Used by the pin policy (actuations per caller, switches per pin) and the channel preflight
(model turns per sender). Keys whose window has emptied are forgotten, so a stream of strangers cannot grow it
without bound.

>>> now = [0.0]
>>> limiter = SlidingWindow(60.0, clock=lambda: now[0])
>>> [limiter.take("telegram:42", limit=2) for _ in range(3)]
[True, True, False]
>>> now[0] = 60.0
>>> limiter.take("telegram:42", limit=2), limiter.count("telegram:42")
(True, 1)
>>> limiter.take("telegram:42", limit=1), limiter.wait("telegram:42", limit=1)
(False, 60.0)
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from abc import abstractmethod
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Protocol

MAX_KEYS = 10_000
"""Beyond this many keys with events in their window, the oldest key is dropped."""


class RateLimiter(Protocol):
    @abstractmethod
    def take(self, key: str, limit: int | None) -> bool:
        """Record an event for ``key`` if fewer than ``limit`` are in the window; False if not.
        ``limit=None`` records it whatever the count (an event that must happen but still
        counts, such as a pin going to its safe level)."""
        ...

    @abstractmethod
    def count(self, key: str) -> int:
        """Events for ``key`` in the current window."""
        ...

    @abstractmethod
    def wait(self, key: str, limit: int) -> float:
        """Seconds until :meth:`take` with ``limit`` could succeed for ``key`` (0: now)."""
        ...


def _wait(stamps: Sequence[float], limit: int, window: float, now: float) -> float:
    """Until enough of ``stamps`` (oldest first, all in the window) leave it for one more."""
    if len(stamps) < limit:
        return 0.0
    return max(0.0, stamps[len(stamps) - limit] + window - now)


class SlidingWindow(RateLimiter):
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

    def wait(self, key: str, limit: int) -> float:
        now = self._clock()
        return _wait(self._recent(key, now) or (), limit, self.window, now)

    def take(self, key: str, limit: int | None) -> bool:
        """Record an event for ``key`` if fewer than ``limit`` are in the window; False if not."""
        now = self._clock()
        events = self._recent(key, now)
        if events is not None and limit is not None and len(events) >= limit:
            return False
        if events is None:
            if len(self._events) >= MAX_KEYS:
                del self._events[next(iter(self._events))]
            events = self._events[key] = deque()
        events.append(now)
        return True


class SharedWindow(RateLimiter):
    """A :class:`SlidingWindow` kept in a file, for one-shot processes: each ``edge-cli gpio``
    command is its own process, and together they must respect the same limit as the agent.
    Wall-clock times, under an exclusive ``flock``; a damaged file counts as empty.

    >>> import tempfile, pathlib
    >>> shared = SharedWindow(60.0, pathlib.Path(tempfile.mkdtemp()) / "rates.json")
    >>> [shared.take("cli:pi", limit=1), shared.take("cli:pi", limit=1)], shared.count("cli:pi")
    ([True, False], 1)
    """

    def __init__(self, window: float, path: Path, clock: Callable[[], float] = time.time):
        self.window = window
        self.path = path
        self._clock = clock

    def _load(self, fh: IO[str], now: float) -> dict[str, list[float]]:
        fh.seek(0)
        try:
            raw = json.loads(fh.read() or "{}")
        except ValueError:
            return {}
        events: dict[str, list[float]] = {}
        if isinstance(raw, dict):
            for key, stamps in raw.items():
                if isinstance(stamps, list):
                    kept = [t for t in stamps if isinstance(t, (int, float)) and 0 <= now - t < self.window]
                    if kept:
                        events[str(key)] = kept
        return events

    def _locked(self) -> IO[str]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        fh = os.fdopen(fd, "r+")
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        return fh

    def count(self, key: str) -> int:
        with self._locked() as fh:
            return len(self._load(fh, self._clock()).get(key, []))

    def wait(self, key: str, limit: int) -> float:
        with self._locked() as fh:
            now = self._clock()
            return _wait(sorted(self._load(fh, now).get(key, [])), limit, self.window, now)

    def take(self, key: str, limit: int | None) -> bool:
        with self._locked() as fh:
            now = self._clock()
            events = self._load(fh, now)
            stamps = events.setdefault(key, [])
            if limit is not None and len(stamps) >= limit:
                return False
            stamps.append(now)
            fh.seek(0)
            fh.truncate()
            fh.write(json.dumps(events))
            fh.flush()
            return True
