"""The agent's memory under a 50 MB result: ``python -m tests.mcp.big_result [SIZE]`` connects
to the bulky server (stdio, sandboxed) as the agent does, notes its own RSS when idle, resets
its peak (``/proc/self/clear_refs``), asks for SIZE bytes (50 MB) and prints
``idle_kib peak_kib outcome`` (for tests/mcp/test_client_memory.py and bench/bench_mcp.py)."""

from __future__ import annotations

import asyncio
import gc
import sys
import tempfile
from pathlib import Path

from edge.config.mcp import McpServerConfig
from edge.core.requester import Requester
from edge.mcp.client_servers import McpServers
from edge.mcp.sandbox import Places
from edge.security.approvals import ApprovalGate
from tests.helpers import ROOT


def status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field}")


async def record(_: object) -> None:
    return None


async def measure(size: int, state: Path) -> tuple[int, int, str]:
    config = McpServerConfig(name="bulky", command=sys.executable,
                             args=["-m", "tests.mcp.servers.bulky"], env={"PYTHONPATH": str(ROOT)},
                             paths=[str(ROOT)], allow=["result"], timeout_seconds=60)
    servers = McpServers([config], ApprovalGate(autonomy="full"), 1000, record,
                         places=Places(state, state))
    await servers.start()
    try:
        tool = servers.tools[0]
        asker = Requester("cli", "bench", via_model=True)
        await tool.execute({"size": 1000}, asker)  # warm: the call path's imports and caches
        gc.collect()
        idle = status_kib("VmRSS")
        Path("/proc/self/clear_refs").write_text("5")  # the peak starts again from here
        result = await tool.execute({"size": size}, asker)
        peak = status_kib("VmHWM")
        outcome = "refused" if not result.success and "refused" in (result.error or "") else \
            f"success={result.success}"
    finally:
        await servers.aclose()
    return idle, peak, outcome


def main() -> None:
    size = int(sys.argv[1]) if len(sys.argv) > 1 else 50_000_000
    with tempfile.TemporaryDirectory() as tmp:
        idle, peak, outcome = asyncio.run(measure(size, Path(tmp)))
    print(idle, peak, outcome)


if __name__ == "__main__":
    main()
