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

    def reattach(self) -> dict[str, str] | None:
        """Give the board back; its status ``info`` once its handshake is done (None if it did
        not come back)."""
        if self.board is None:
            return None
        answer = ask_agent(self.args, "boards.reattach", {"board": self.board})
        if answer is None or not answer.ok:
            return None
        return dict(answer.data.get("info", {}))


def described(kind: str, info: dict[str, str] | None) -> str | None:
    """What a board's handshake reported, as the flash compares it with the image: the Arduino's
    firmware (``EdgeFirmata 2.5``), an STM32's board and version (``nucleo_f401re 1.0``)."""
    from edge.cli.shipped_firmware import STM32_IMAGES

    if info is None:
        return None
    if "firmware" not in info:
        return info.get("error", "no handshake")
    if kind == "stm32":
        return f"{STM32_IMAGES.get(info.get('board', ''), info.get('board'))} {info['firmware']}"
    return info["firmware"]


def handshake(kind: str, port: str | None) -> dict[str, str] | None:
    """The status ``info`` a freshly flashed board gives over ``port`` (``firmware``, an STM32's
    ``board``), or ``error``: why it said nothing; None with no serial port to ask (an ST-Link)."""
    if port is None:
        return None
    from peripherals.arduino import ArduinoBoard
    from peripherals.stm32 import Stm32Board

    async def ask() -> dict[str, str]:
        board = ArduinoBoard("flashed", port) if kind == "arduino" else Stm32Board("flashed", port)
        await board.connect()
        info = dict(board.status().info)
        await board.close()
        return info

    try:
        return asyncio.run(ask())
    except BoardError as exc:
        return {"error": f"no handshake ({exc})"}
