"""Around ``edge-cli firmware flash``: lend the board out of a running agent and take it back
(``boards.release`` / ``boards.reattach``), or, with no agent, check the handshake directly.
"""

from __future__ import annotations

import argparse
import asyncio

from edge.cli.agent_socket import ask_agent
from edge.ops.result import OpResult
from peripherals.exc import BoardError


class BoardLoan:
    """The board a running agent lent us (``board``: its name), or nothing when no agent runs or
    the agent does not hold that board."""

    def __init__(self, args: argparse.Namespace, board_or_port: str | None):
        self.args, self.asked = args, board_or_port
        self.board: str | None = None

    def release(self) -> OpResult | None:
        """Ask the agent to release the board; a refusal to report, or None to go on flashing."""
        if self.asked is None:
            return None
        answer = ask_agent(self.args, "boards.release", {"board": self.asked})
        if answer is None or (not answer.ok and answer.data.get("board", "") is None):
            return None  # no agent, or one without this board: nobody holds the port
        if not answer.ok:
            return answer
        self.board = answer.data["board"]
        return None

    def reattach(self) -> str | None:
        """Give the board back; what its handshake reported (None if it did not come back)."""
        if self.board is None:
            return None
        answer = ask_agent(self.args, "boards.reattach", {"board": self.board})
        if answer is None or not answer.ok:
            return None
        firmware = answer.data.get("info", {}).get("firmware")
        return str(firmware) if firmware else None


def handshake(kind: str, port: str | None) -> str | None:
    """What a freshly flashed board reports over ``port`` (``EdgeFirmata 2.5``, ``1.0``), or why
    it said nothing; None with no serial port to ask (an ST-Link)."""
    if port is None:
        return None
    from peripherals.arduino import ArduinoBoard
    from peripherals.stm32 import Stm32Board

    async def ask() -> str:
        if kind == "arduino":
            uno = ArduinoBoard("flashed", port)
            await uno.connect()
            await uno.close()
            return uno.firmware
        st = Stm32Board("flashed", port)
        await st.connect()
        await st.close()
        return f"{st.hello['fw_major']}.{st.hello['fw_minor']}"

    try:
        return asyncio.run(ask())
    except BoardError as exc:
        return f"no handshake ({exc})"
