"""The local terminal as a channel: one line in, one turn; replies printed as they finish.

Stdin is read by a daemon thread (a blocked ``readline`` must never hold up shutdown) and handed
to the event loop. ``listen`` returns at end of input; the runtime then finishes the turns in
flight and, with no other channel, exits: ``printf '/gpio led on\\n/pins\\n' | edge-cli run``.
"""

from __future__ import annotations

import asyncio
import getpass
import logging
import os
import stat
import sys
import threading
from typing import TextIO

from edge.channels.base import Channel, ChannelMessage, SendMessage

log = logging.getLogger(__name__)

EOF_MARK = None


def stdin_attached(stream: TextIO) -> bool:
    """True for a terminal, pipe, file or socket; False for /dev/null (systemd's default), where
    there is nobody to talk to."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        return True  # an in-memory stream given by a caller
    if os.isatty(fd):
        return True
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISREG(mode) or stat.S_ISSOCK(mode)


class CliChannel(Channel):
    """A line is a whole message, so it starts its turn at once (no debounce). Typed in a
    terminal, a newer line interrupts the running turn as on any chat; piped lines are a script
    and each is answered in order."""

    name = "cli"
    merges_bursts = False

    def __init__(self, stdin: TextIO | None = None, stdout: TextIO | None = None):
        self._stdin = stdin or sys.stdin
        self._stdout = stdout or sys.stdout
        self.sender = getpass.getuser()
        self.interactive = self._stdin.isatty()
        self.newer_message_interrupts = self.interactive

    def _prompt(self) -> None:
        if self.interactive:
            self._stdout.write("> ")
            self._stdout.flush()

    def _reader(self, loop: asyncio.AbstractEventLoop, lines: asyncio.Queue[str | None]) -> None:
        try:
            for line in self._stdin:
                loop.call_soon_threadsafe(lines.put_nowait, line)
        except OSError as exc:  # a terminal that hung up (EIO) ends the input like end of file
            log.info("cli_input_closed error=%r", exc)
        finally:
            loop.call_soon_threadsafe(lines.put_nowait, EOF_MARK)

    async def listen(self, bus: asyncio.Queue[ChannelMessage]) -> None:
        lines: asyncio.Queue[str | None] = asyncio.Queue()
        loop = asyncio.get_running_loop()
        threading.Thread(target=self._reader, args=(loop, lines), name="cli-stdin",
                         daemon=True).start()
        self._prompt()
        while (line := await lines.get()) is not EOF_MARK:
            text = line.strip()
            if text:
                await bus.put(ChannelMessage(self.sender, self.sender, text, self.name))
            else:
                self._prompt()

    async def send(self, message: SendMessage) -> None:
        self._stdout.write(message.content.rstrip("\n") + "\n")
        self._prompt()
        self._stdout.flush()

    async def health_check(self) -> bool:
        """Up while replies can be written: also after the input ended, while the lines read
        are answered (the supervisor tells a listener that failed)."""
        return not self._stdout.closed
