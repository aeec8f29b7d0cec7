"""Lending a board out to be flashed while the agent keeps running: ``boards.release`` drives the
board's outputs to their safe levels, closes its port and keeps the board supervisor away from
it; ``boards.reattach`` gives it back and waits for the handshake, so ``edge-cli firmware flash``
can check what the board now runs. Both are the local operator's alone.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from pydantic import Field

from edge.core.requester import Requester
from edge.ops.result import OpResult, OpTarget
from edge.tools.base import ToolArgs
from peripherals.board_types import SerialBoardOptions

log = logging.getLogger(__name__)

REATTACH_SECONDS = 20.0
"""How long ``boards.reattach`` waits for the board's handshake (stock Firmata answers about
3 s after the reset an open causes)."""


class LendBoardArgs(ToolArgs):
    board: str = Field(description="a configured board's name, or the serial port it is on")


def _board_named(target: OpTarget, given: str) -> str | None:
    """The configured board called ``given``, or on the port ``given``."""
    if given in target.hardware.boards:
        return given
    for name, section in target.loaded.config.boards.items():
        if isinstance(section, SerialBoardOptions) and section.port == given:
            return name
    return None


def _unknown(target: OpTarget, given: str) -> OpResult:
    return OpResult(False, f"no board named or on {given!r} in this agent (its boards: "
                    f"{', '.join(target.hardware.boards) or 'none'})", {"board": None}, exit_code=2)


async def release_board_op(target: OpTarget, args: dict[str, Any], requester: Requester) -> OpResult:
    """``boards.release``: outputs safe, port closed, not reconnected until ``boards.reattach``."""
    name = _board_named(target, args["board"])
    if name is None:
        return _unknown(target, args["board"])
    failed = await target.hardware.claims.lend(name)
    log.info("board_released board=%s by=%s failed=%s", name, requester.caller, ",".join(failed))
    words = f"{name} released: outputs safe, port closed; `boards.reattach` gives it back"
    if failed:
        words = f"{name} released, but {', '.join(failed)} could not be made safe"
    return OpResult(True, words, {"board": name, "unsafe": failed})


async def reattach_board_op(target: OpTarget, args: dict[str, Any], requester: Requester) -> OpResult:
    """``boards.reattach``: the supervisor connects the board again; answers once its handshake
    is done (with what the board reports) or after :data:`REATTACH_SECONDS`."""
    name = _board_named(target, args["board"])
    if name is None:
        return _unknown(target, args["board"])
    board = target.hardware.boards[name]
    target.hardware.claims.take_back(name)
    log.info("board_reattach board=%s by=%s", name, requester.caller)
    deadline = time.monotonic() + REATTACH_SECONDS
    while not board.connected and time.monotonic() < deadline:
        await asyncio.sleep(0.05)  # the supervisor's poll connects it
    status = board.status().as_dict()
    if not board.connected:
        return OpResult(False, f"{name} did not come back within {REATTACH_SECONDS:.0f} s: "
                        f"{status['detail']}; see `edge-cli boards list`", status)
    return OpResult(True, f"{name} is back: {status['detail']}", status)
