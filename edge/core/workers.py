"""The agent's worker threads: the event loop's default executor (``asyncio.to_thread``), as
large as Python would let it grow and started whole.

Python's executor starts a thread only when a call finds every thread busy and never lets one
go, so an agent running for weeks gained a thread the first time a sensor read, an audit query
and a camera snapshot happened to overlap: its thread count said nothing about whether it leaked.
With every worker started at once, the count is the same from the first second to the last.

>>> async def demo():
...     pool = install_workers(asyncio.get_running_loop(), workers=3)
...     names = {await asyncio.to_thread(lambda: threading.current_thread().name)
...              for _ in range(20)}
...     return len(pool._threads), all(n.startswith("edge-worker") for n in names)
>>> asyncio.run(demo())
(3, True)
"""

from __future__ import annotations

import asyncio
import os
import threading
from concurrent.futures import ThreadPoolExecutor

WORKERS = min(32, (os.cpu_count() or 1) + 4)
"""What Python's own default executor grows to: 6 on a two-core machine, 8 on a Pi 3, 4 or 5."""
START_TIMEOUT = 10.0


def install_workers(loop: asyncio.AbstractEventLoop, workers: int = WORKERS) -> ThreadPoolExecutor:
    """Give ``loop`` a default executor of ``workers`` threads, all running when this returns.
    ``asyncio.run`` shuts it down as it ends, as it would its own."""
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="edge-worker")
    everyone = threading.Barrier(workers + 1, timeout=START_TIMEOUT)
    for _ in range(workers):  # each finds no idle thread (all wait here), so starts its own
        pool.submit(everyone.wait)
    everyone.wait()
    loop.set_default_executor(pool)
    return pool
