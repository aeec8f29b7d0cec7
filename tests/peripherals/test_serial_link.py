"""Serial ports are opened for one process alone: while an agent holds a board's port, another
agent or an ``edge-cli`` command is refused at once, with a message that says why, before it
configures the port (which would talk over the holder, and reset a real Uno)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from peripherals.arduino import ArduinoBoard
from peripherals.exc import BoardUnavailable
from peripherals.serial_link import open_port
from peripherals.stm32 import Stm32Board
from tests.helpers import ROOT

HOLD = """
import sys, time
from peripherals.serial_link import open_port
port = open_port(sys.argv[1], 115200, timeout=0.05)
print("holding", flush=True)
sys.stdin.read()  # until the test closes our stdin
"""


@pytest.fixture
def pty_port():
    """A pty's terminal end, as an emulator offers a board; the test holds the other end."""
    controller, terminal = os.openpty()
    path = os.ttyname(terminal)
    os.close(terminal)
    yield path
    os.close(controller)


@pytest.fixture
def held(pty_port):
    """``pty_port`` held by another process (as by a running agent)."""
    holder = subprocess.Popen([sys.executable, "-c", HOLD, pty_port], cwd=ROOT, text=True,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
    yield pty_port
    holder.communicate(timeout=10)


@pytest.mark.parametrize("board", [
    lambda port: Stm32Board("nucleo", port, watchdog_ms=0, handshake_timeout=2.0),
    lambda port: ArduinoBoard("uno", port, watchdog_ms=0, handshake_timeout=2.0),
], ids=["stm32", "arduino"])
async def test_a_port_held_by_another_process_is_refused_at_once(held, board):
    started = time.monotonic()
    with pytest.raises(BoardUnavailable) as refused:
        await board(held).connect()
    assert time.monotonic() - started < 1.0  # no handshake attempted on someone else's port
    message = str(refused.value)
    assert held in message
    assert "in use by another process (another agent or edge-cli?)" in message


def test_the_port_is_free_again_once_its_holder_closes_it(pty_port):
    first = open_port(pty_port, 115200, timeout=0.05)
    with pytest.raises(BoardUnavailable, match="in use by another process"):
        open_port(pty_port, 115200, timeout=0.05)
    first.close()
    open_port(pty_port, 115200, timeout=0.05).close()


def test_other_failures_keep_their_own_message(tmp_path):
    with pytest.raises(BoardUnavailable, match="No such file") as refused:
        open_port(str(tmp_path / "ttyACM9"), 115200)
    assert "in use" not in str(refused.value) and "boards discover" in str(refused.value)
