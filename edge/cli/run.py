"""``edge-cli run``: the agent in the foreground."""

from __future__ import annotations

import asyncio

from edge.config.loader import load_config
from edge.logsetup import configure
from edge.runtime import Runtime


def run_agent(args) -> int:
    loaded = load_config(args.config)
    configure(loaded.config.logging.level)
    runtime = Runtime(loaded, resident=True)
    asyncio.run(runtime.run())
    return 0
