"""The web page ([web] listen): a pin switched by another door (``edge-cli``'s control socket)
until each of 5 connected pages has it on screen, i.e. received the pushed event and read the
pins again as the page does, p50/p95 (target p95 under 250 ms); the agent's idle RSS with
``[web] listen`` and no browser next to the same agent without it (target at most +3 MB), and
with 5 pages connected; the bytes a first visit transfers (the page, its style and its script,
gzipped; target at most 50 KB). The page's chat is a channel, which builds the chat pipeline an
agent with no other channel would not have: its cost is shown apart. Three real daemons
(``edge-cli run``, simulated pins), real HTTP."""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from bench.process import percentile, row, rss_kib
from edge.control import client
from edge.security.web_sessions import WebSessions
from tests.helpers import ROOT
from tests.mcp.http_agent import free_port

PAGES = 5
SWITCHES = 60
SETTLE_SECONDS = 8.0
CONFIG = """
[memory]
backend = "none"
[channels.cli]
enabled = false
[security]
autonomy = "full"
max_actuations_per_minute = 1000000
[boards.gpio.aliases]
led = "GPIO17"
[boards.gpio.pins]
led = {{ mode = "output", safe = "off", max_switches_per_minute = 6000 }}
{web}
"""


def start(root: Path, web: str) -> tuple[subprocess.Popen[bytes], Path]:
    root.mkdir()
    (root / "config.toml").write_text(CONFIG.format(web=web))
    env = {"HOME": str(root), "EDGE_CONFIG": str(root / "config.toml"), "EDGE_STATE_DIR": str(root / "state"),
           "PATH": "/usr/bin:/bin", "EDGE_MEMORY__EMBEDDER": "none"}
    proc = subprocess.Popen([sys.executable, "-m", "edge", "run"], env=env, cwd=ROOT, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    sock = root / "state" / "control.sock"
    deadline = time.monotonic() + 60
    while not sock.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError("the agent did not start")
        time.sleep(0.05)
    return proc, root / "state"


async def page(url: str, sessions: WebSessions, name: str, seen: asyncio.Queue[float],
               ready: asyncio.Event, opened: list[int], pairing: asyncio.Lock) -> None:
    async with httpx.AsyncClient(timeout=30) as http:
        async with pairing:  # a code is issued and redeemed before the next (3 are kept)
            code = sessions.issue("viewer", name).code
            csrf = (await http.post(f"{url}/api/pair", json={"code": code})).json()["csrf"]
        async with http.stream("GET", f"{url}/api/events") as stream:
            opened.append(1)
            if len(opened) == PAGES:
                ready.set()
            async for line in stream.aiter_lines():
                if line == "event: pin":
                    await http.post(f"{url}/api/op", json={"op": "pins"}, headers={"X-CSRF-Token": csrf})
                    seen.put_nowait(time.perf_counter())


async def latencies(url: str, state: Path) -> list[float]:
    sessions = WebSessions.in_state_dir(state)
    seen: asyncio.Queue[float] = asyncio.Queue()
    ready = asyncio.Event()
    opened: list[int] = []
    pairing = asyncio.Lock()
    pages = [asyncio.create_task(page(url, sessions, f"bench{n}", seen, ready, opened, pairing))
             for n in range(PAGES)]
    await asyncio.wait_for(ready.wait(), 30)
    samples = []
    sock = [state / "control.sock"]
    for n in range(SWITCHES):
        started = time.perf_counter()
        done = await asyncio.to_thread(client.request, sock, "gpio.write",
                                       {"pin": "led", "value": "on" if n % 2 == 0 else "off"})
        if not done.get("ok"):
            raise RuntimeError(f"gpio.write: {done}")
        for _ in range(PAGES):
            samples.append((await asyncio.wait_for(seen.get(), 10) - started) * 1000)
        await asyncio.sleep(0.02)
    for task in pages:
        task.cancel()
    await asyncio.gather(*pages, return_exceptions=True)
    return samples


async def first_visit(url: str) -> int:
    total = 0
    async with httpx.AsyncClient(headers={"Accept-Encoding": "gzip"}) as http:
        for path in ("/", "/style.css", "/app.js"):
            async with http.stream("GET", f"{url}{path}") as answer:
                total += sum([len(chunk) async for chunk in answer.aiter_raw()])
                total += sum(len(k) + len(v) + 4 for k, v in answer.headers.raw) + 17
    return total


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        plain, _ = start(Path(tmp) / "plain", "")
        page_only, _ = start(Path(tmp) / "page", f'[web]\nlisten = "127.0.0.1:{free_port()}"\nchat = false')
        web, state = start(Path(tmp) / "web", f'[web]\nlisten = "127.0.0.1:{port}"\nmax_streams = {PAGES}')
        try:
            time.sleep(SETTLE_SECONDS)
            base, alone, with_web = rss_kib(plain.pid), rss_kib(page_only.pid), rss_kib(web.pid)
            row("idle RSS without [web] (no channel)", f"{base / 1024:.1f} MB", ratio="1.00x")
            row("idle RSS with [web], chat = false", f"{alone / 1024:.1f} MB", "target +3 MB",
                f"{(alone - base) / 1024:+.1f} MB")
            row("idle RSS with [web] and its chat", f"{with_web / 1024:.1f} MB", "(the chat pipeline)",
                f"{(with_web - base) / 1024:+.1f} MB")
            samples = asyncio.run(latencies(url, state))
            connected = rss_kib(web.pid)
            row(f"pin by edge-cli -> on {PAGES} pages, p50", f"{statistics.median(samples):.1f} ms")
            p95 = percentile(samples, 0.95)
            row(f"pin by edge-cli -> on {PAGES} pages, p95", f"{p95:.1f} ms", "target 250 ms",
                f"{p95 / 250:.2f}x")
            row(f"RSS with {PAGES} pages connected", f"{connected / 1024:.1f} MB", "",
                f"{(connected - base) / 1024:+.1f} MB")
            sent = asyncio.run(first_visit(url))
            row("first visit transferred (gzip)", f"{sent / 1024:.1f} KB", "target 50 KB",
                f"{sent / 1024 / 50:.2f}x")
        finally:
            for proc in (plain, page_only, web):
                proc.terminate()
                proc.wait(20)
