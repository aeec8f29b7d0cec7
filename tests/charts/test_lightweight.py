"""matplotlib loads with the first chart, not with the agent: an agent that never draws one does
not carry it (about 30 MB of RSS and a second of start-up on a Pi)."""

from __future__ import annotations

import subprocess
import sys

from tests.charts.greenhouse import RULES
from tests.helpers import ROOT

PROBE = """
import asyncio, sys, time
from pathlib import Path
from edge.assembly import AgentAssembly
from edge.config.loader import load_config
from edge.core.requester import Requester
from edge.tools.base import spec_of
from tests.charts.greenhouse import write_week

loaded = load_config(sys.argv[1])
assembly = AgentAssembly(loaded, resident=False)
tool = assembly.tools["sensor_chart"]
[spec_of(t) for t in assembly.tools.values()]  # what the model is told of every tool
import edge.agent.commands, edge.channels.telegram, edge.runtime
print("before", "matplotlib" in sys.modules)

async def draw():
    await write_week(loaded.state_dir, time.time())
    result = await tool.execute({"name": "greenhouse", "since": "6h"}, Requester("cli", "me", "me"))
    assert result.success, result.error
    await assembly.recorder.store.close()

asyncio.run(draw())
print("after", "matplotlib" in sys.modules)
"""


def test_the_agent_loads_matplotlib_with_its_first_chart(isolated_env, write_config):
    path = write_config(RULES)
    out = subprocess.run([sys.executable, "-c", PROBE, str(path)], env=isolated_env, cwd=ROOT,
                         capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["before", "False", "after", "True"], out.stderr
