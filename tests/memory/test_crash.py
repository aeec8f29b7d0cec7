"""A SIGKILL in the middle of a stream of stores leaves a database that opens and holds every
entry whose store had returned."""

import signal
import subprocess
import sys
import textwrap

from edge.memory.embedders import NoopEmbedding
from edge.memory.sqlite import SqliteMemory

WRITER = textwrap.dedent("""
    import asyncio, sys
    from pathlib import Path
    from edge.memory.base import Category
    from edge.memory.embedders import NoopEmbedding
    from edge.memory.sqlite import SqliteMemory

    async def main():
        memory = SqliteMemory(Path(sys.argv[1]), NoopEmbedding())
        i = 0
        while True:
            await memory.store(f"k{i}", f"entry number {i} " + "x" * 200, Category.CONVERSATION)
            print(f"k{i}", flush=True)   # acknowledged: store() returned after COMMIT
            i += 1

    asyncio.run(main())
""")


async def test_sigkill_mid_stream_keeps_every_acknowledged_store(tmp_path):
    path = tmp_path / "brain.db"
    child = subprocess.Popen([sys.executable, "-c", WRITER, str(path)], stdout=subprocess.PIPE,
                             text=True)
    acknowledged = []
    try:
        while len(acknowledged) < 300:
            line = child.stdout.readline()
            assert line, "writer exited early"
            acknowledged.append(line.strip())
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
        acknowledged += [line.strip() for line in child.stdout if line.strip()]
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(timeout=30)
        child.stdout.close()
    assert child.returncode == -signal.SIGKILL

    memory = SqliteMemory(path, NoopEmbedding())
    try:
        assert await memory.health_check()
        stored = {e.key for e in await memory.list()}
        assert set(acknowledged) <= stored
        assert (await memory.recall("entry number 299", limit=50))
    finally:
        await memory.close()
