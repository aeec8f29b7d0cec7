"""Check-and-act as one step: the outputs an interlock sees together switch one at a time.

An interlock is only as good as the moment it looks: "count the outputs that are on, then
switch" is two steps, and a second caller (another door, a rule, the trip) that checks between
them sees the first switch as not yet made and passes too. So every output an interlock can see
(the ``exclusive`` or ``at_most`` group, a ``forbid`` target and the output its ``while`` names)
is put in one group with the others it shares an interlock with, and each group has one lock:
from the interlock check to the finished write and its state update nobody else switches an
output of that group. Outputs that share no interlock keep their own pace (no lock at all).

A caller cancelled while its switch is in flight (``/stop``, a newer message, a timeout) does not
let go of the lock: the switch finishes in a task of its own and releases it, so a switch in
flight always counts as made.

>>> groups = AtomicGroups([[("gpio", "A"), ("gpio", "B")], [("gpio", "B"), ("gpio", "C")],
...                        [("gpio", "D")]])
>>> groups.members(("gpio", "C")), groups.members(("gpio", "D")), groups.members(("gpio", "E"))
((('gpio', 'A'), ('gpio', 'B'), ('gpio', 'C')), (), ())
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from typing import TypeVar

T = TypeVar("T")
Key = tuple[str, str]
"""(board, canonical pin)."""


class AtomicGroups:
    """One lock per set of outputs joined by interlocks (overlapping scopes merge)."""

    def __init__(self, scopes: Iterable[Iterable[Key]] = ()):
        parent: dict[Key, Key] = {}

        def root(key: Key) -> Key:
            while parent.setdefault(key, key) != key:
                key = parent[key]
            return key

        for scope in scopes:
            keys = list(scope)
            if len(keys) < 2:
                continue
            for key in keys[1:]:
                parent[root(key)] = root(keys[0])
        locks: dict[Key, asyncio.Lock] = {}
        self._locks = {key: locks.setdefault(root(key), asyncio.Lock()) for key in parent}
        self._members: dict[Key, tuple[Key, ...]] = {}
        for key in parent:
            self._members[key] = tuple(k for k in parent if root(k) == root(key))
        self._running: set[asyncio.Task[object]] = set()

    def members(self, key: Key) -> tuple[Key, ...]:
        """Every output in ``key``'s group (itself included); empty when it has none."""
        return self._members.get(key, ())

    async def run(self, key: Key, step: Callable[[], Awaitable[T]]) -> T:
        """Run ``step`` (check, then act) while no other output of ``key``'s group switches.
        Waiting for the lock can be cancelled; once it is held, ``step`` runs to its end."""
        lock = self._locks.get(key)
        if lock is None:
            return await step()
        await lock.acquire()
        task = asyncio.ensure_future(self._holding(lock, step))
        self._running.add(task)
        task.add_done_callback(self._finished)
        return await asyncio.shield(task)

    @staticmethod
    async def _holding(lock: asyncio.Lock, step: Callable[[], Awaitable[T]]) -> T:
        try:
            return await step()
        finally:
            lock.release()

    def _finished(self, task: asyncio.Task[object]) -> None:
        self._running.discard(task)
        if not task.cancelled():
            task.exception()  # a cancelled caller's failure was recorded by the door; not lost

    async def drain(self) -> None:
        """Wait for every switch in flight (shutdown: nothing is left half done)."""
        while self._running:
            await asyncio.gather(*list(self._running), return_exceptions=True)
