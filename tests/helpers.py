"""Helpers shared by test modules (import from here, never from another test module):
the project root, the edge-cli command line, running it (once, or as a daemon), polling until
something holds, and building a channel message."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from edge.channels.base import ChannelMessage
from edge.core.requester import Requester

ROOT = Path(__file__).resolve().parents[1]


def manual_pages() -> list[Path]:
    """The manual as a newcomer reads it: README.md, then every page under docs/ (the tutorials,
    how-to pages, the safety pages and the generated reference), so a test of what the manual
    shows follows a passage wherever it moves."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def manual_text() -> str:
    """Every page of :func:`manual_pages`, one after the other."""
    return "\n".join(page.read_text() for page in manual_pages())


EDGE_CLI = [sys.executable, "-m", "edge"]

T = TypeVar("T")


def cli(*args: str, env: dict[str, str], stdin: str | None = None,
        timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run ``edge-cli ARGS`` from the checkout, as a user would; output is captured as text."""
    return subprocess.run([*EDGE_CLI, *args], env=env, input=stdin, capture_output=True,
                          text=True, cwd=ROOT, timeout=timeout)


def start_agent(env: dict[str, str], timeout: float = 30) -> subprocess.Popen[str]:
    """``edge-cli run`` as a daemon under ``env`` (its EDGE_CONFIG and EDGE_STATE_DIR), returned
    once its control socket is up; the caller stops it. Its stderr is a pipe, read on failure."""
    proc = subprocess.Popen([*EDGE_CLI, "run"], env=env, cwd=ROOT, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    socket = Path(env["EDGE_STATE_DIR"]) / "control.sock"
    deadline = time.monotonic() + timeout
    while not socket.exists():
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else "agent exited"
        assert time.monotonic() < deadline, "the agent did not start"
        time.sleep(0.02)
    return proc


async def until(predicate: Callable[[], T], timeout: float = 10.0) -> T:
    """Poll ``predicate`` (sync) on the event loop until it is truthy; returns its value."""
    deadline = asyncio.get_running_loop().time() + timeout
    while asyncio.get_running_loop().time() < deadline:
        result = predicate()
        if result:
            return result
        await asyncio.sleep(0.02)
    raise AssertionError("condition not met in time")


def wait_for(predicate: Callable[[], T], timeout: float = 30.0, interval: float = 0.1) -> T:
    """The blocking form of :func:`until`, for tests that drive other processes."""
    deadline = time.monotonic() + timeout
    while True:
        result = predicate()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(interval)


def msg(text: str, sender: str = "alice", **kw: Any) -> ChannelMessage:
    """A channel message from ``sender`` (channel ``cli`` unless given)."""
    return ChannelMessage(sender, kw.pop("reply_target", sender), text, kw.pop("channel", "cli"), **kw)


def asker(caller: str = "test:me", *, via_model: bool = False) -> Requester:
    """A requester from its ``channel:sender`` name, as logs write it (``telegram:42``)."""
    channel, _, sender = caller.partition(":")
    return Requester(channel, sender or channel, sender or channel, via_model=via_model)
