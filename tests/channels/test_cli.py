"""The CLI channel: piped input is read to the end, every turn answered, then the agent exits."""

from __future__ import annotations

import asyncio
import io

from edge.channels.cli import CliChannel
from edge.channels.supervisor import ListenerSupervisor
from edge.runtime import Runtime
from edge.status import format_status


async def test_piped_input_runs_every_line_then_exits(default_config, mock_factory):
    stdin = io.StringIO("/gpio led on\n\n/pins\n/gpio GPIO4 on\n")
    stdout = io.StringIO()
    runtime = Runtime(default_config, resident=True, pin_factory=mock_factory,
                      stdin=stdin, stdout=stdout)
    await runtime.run()
    lines = [line.strip() for line in stdout.getvalue().splitlines()]
    assert lines[0] == "gpio:GPIO17 (led) set on"
    assert "gpio:GPIO17 (led) output = on, safe off" in lines
    assert lines[-1].startswith("Error: gpio:GPIO4 is not in the allowlist")
    assert mock_factory.pin(17).state == 0  # safe level restored on exit
    assert not default_config.control_socket.exists()


async def test_status_in_a_piped_run_shows_the_terminal_up(default_config, mock_factory):
    stdout = io.StringIO()
    runtime = Runtime(default_config, resident=True, pin_factory=mock_factory,
                      stdin=io.StringIO("/gpio led on\n/pins\n/status\n"), stdout=stdout)
    await runtime.run()
    text = stdout.getvalue()
    assert "channel cli: up" in text and "down" not in text


async def test_a_terminal_whose_input_ended_is_up_while_it_answers():
    """The input may end (every line read) before the last line is answered: the terminal is
    still answering, so status says up, not down, and the heartbeat does not report it."""
    channel = CliChannel(stdin=io.StringIO("/gpio led on\n"), stdout=io.StringIO())
    supervisor = ListenerSupervisor(channel)
    bus: asyncio.Queue = asyncio.Queue()
    await supervisor.run(bus)  # returns at the end of input
    assert bus.qsize() == 1
    health = await supervisor.health()
    assert health["healthy"] and health["input_ended"] and health["down_since"] is None
    assert supervisor.down_since is None
    shown = format_status({"daemon": {"running": True}, "channels": [health]})
    assert "channel cli: up (input ended; answering what it read)" in shown
