"""The agent process: assembles hardware, tools, provider, channels and the control socket from
config, runs them, and on SIGTERM/SIGINT or end of input leaves every pin at its safe level."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import stat
import sys
import time
from typing import Any, TextIO

from edge import __version__
from edge.agent.dispatch import Dispatcher
from edge.agent.pipeline import Agent
from edge.channels.base import Channel
from edge.config.loader import LoadedConfig
from edge.control.server import ControlServer
from edge.hardware import build_hardware
from edge.providers.base import Provider
from edge.status import format_status
from edge.tools.gpio import hardware_tools

log = logging.getLogger(__name__)

SHUTDOWN_GRACE_SECONDS = 5.0


def stdin_attached(stream: TextIO) -> bool:
    """True for a terminal, pipe, file or socket; False for /dev/null (systemd's default)."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        return True  # an in-memory stream given by a caller
    if os.isatty(fd):
        return True
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISREG(mode) or stat.S_ISSOCK(mode)


class Runtime:
    """``resident=True`` is the daemon (``edge-cli run``); False is a one-shot CLI command."""

    def __init__(self, loaded: LoadedConfig, *, resident: bool, pin_factory=None,
                 stdin: TextIO | None = None, stdout: TextIO | None = None):
        self.loaded = loaded
        self.config = loaded.config
        self.resident = resident
        self.hardware = build_hardware(self.config, resident=resident, pin_factory=pin_factory)
        self.tools = {t.name: t for t in hardware_tools(self.hardware, self.hardware.policy)}
        self.provider: Provider | None = None
        self.channels: dict[str, Channel] = {}
        self.started_at = time.time()
        self._stdin, self._stdout = stdin or sys.stdin, stdout or sys.stdout
        self._stop = asyncio.Event()

    async def status(self) -> dict[str, Any]:
        channels = [{"name": name, "healthy": await ch.health_check()}
                    for name, ch in self.channels.items()]
        provider = self.config.provider
        return {
            "daemon": {"running": self.resident, "version": __version__, "pid": os.getpid(),
                       "uptime_seconds": round(time.time() - self.started_at, 1)},
            "config": self.loaded.source,
            "boards": [s.as_dict() for s in self.hardware.status()],
            "channels": channels,
            "provider": {"configured": provider.configured,
                         "model": self.provider.model if self.provider else provider.model,
                         "base_url": provider.base_url},
        }

    async def status_text(self) -> str:
        return format_status(await self.status())

    def request_stop(self, reason: str = "") -> None:
        if not self._stop.is_set():
            log.info("stopping reason=%s", reason or "requested")
            self._stop.set()

    def _build_channels(self) -> None:
        if self.config.channels.cli.enabled and stdin_attached(self._stdin):
            from edge.channels.cli import CliChannel

            self.channels["cli"] = CliChannel(self._stdin, self._stdout)

    async def run(self) -> None:
        """Run until a signal, or until end of input when the CLI is the only channel."""
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self.request_stop, signal.Signals(sig).name)
        control = ControlServer(self.loaded.control_socket, self)
        tasks: list[asyncio.Task] = []
        try:
            await self.hardware.start()
            await control.start()
            from edge.providers.factory import create_provider

            self.provider = create_provider(self.config.provider)
            agent = Agent(list(self.tools.values()), self.hardware, self.provider, self.status_text,
                          max_tool_iterations=self.config.agent.max_tool_iterations,
                          instructions=self.config.agent.instructions)
            self._build_channels()
            dispatcher = Dispatcher(agent.handle, self.channels)
            tasks.append(asyncio.create_task(dispatcher.run(), name="dispatcher"))
            for name, channel in self.channels.items():
                tasks.append(asyncio.create_task(
                    self._listen(name, channel, dispatcher), name=f"listen-{name}"))
            self._log_ready()
            await self._stop.wait()
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await self.hardware.shutdown()
            await control.close()
            if self.provider:
                await self.provider.aclose()
            for sig in (signal.SIGTERM, signal.SIGINT):
                loop.remove_signal_handler(sig)
            log.info("stopped")

    async def _listen(self, name: str, channel: Channel, dispatcher: Dispatcher) -> None:
        try:
            await channel.listen(dispatcher.bus)
        except Exception:
            log.exception("channel_failed channel=%s", name)
        if len(self.channels) == 1:
            await dispatcher.drain()
            self.request_stop(f"end of input on {name}")

    def _log_ready(self) -> None:
        for board in self.hardware.status():
            log.info("board name=%s kind=%s simulated=%s detail=%r", board.name, board.kind,
                     board.simulated, board.detail)
            if board.simulated:
                print(f"edge-agent: board {board.name} is SIMULATED: {board.detail}",
                      file=sys.stderr)
        provider = self.config.provider
        log.info("ready version=%s config=%r channels=%s provider=%s startup_ms=%d", __version__,
                 self.loaded.source, ",".join(self.channels) or "none",
                 provider.model if provider.configured else "none",
                 (time.time() - self.started_at) * 1000)
