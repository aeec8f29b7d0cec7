"""``[boards.NAME] type = "node"``: another edge-agent's pins, through the broker.

Registered from ``edge`` through the ``edge_agent.boards`` entry point (``peripherals`` never
imports ``edge``)::

    [project.entry-points."edge_agent.boards"]
    node = "edge.fleet.board:SPEC"

This module is what config validation imports: its options and spec only. The driver
(:class:`edge.fleet.node_board.NodeBoard`) is imported when the board is built.

>>> NodeBoardOptions(node_id="shed").base
'edge-agent/shed'
>>> NodeBoardOptions(node_id="shed", base_topic="farm/shed").base
'farm/shed'
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, Field

from peripherals.base import Board, BoardContext, BoardOptions, BoardSpec

NODE_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
DEFAULT_TIMEOUT_SECONDS = 5.0
MAX_TIMEOUT_SECONDS = 60.0


def _node_id(value: str) -> str:
    if not NODE_ID.fullmatch(value):
        raise ValueError("node_id is the other agent's [mqtt] node_id: letters, digits, '_' and "
                         "'-' (at most 64)")
    return value


def _base(value: str) -> str:
    if value and (any(c in value for c in "#+\0") or value.startswith(("/", "$"))
                  or value.endswith("/") or "//" in value):
        raise ValueError("base_topic is the other agent's [mqtt] base_topic: no '#', '+', NUL "
                         "or empty level, not beginning with '/' or '$'")
    return value


class NodeBoardOptions(BoardOptions):
    """Another edge-agent on the same broker. Its pins are allowlisted here as on any board
    (the key is the pin's name on that node: its name on the broker, an alias or ``GPIO17``);
    that node's own policy applies as well, and sees the caller ``mqtt:<this node_id>``. Needs
    this agent's ``[mqtt]``."""

    node_id: Annotated[str, AfterValidator(_node_id)]
    """The other agent's ``[mqtt] node_id``."""
    base_topic: Annotated[str, AfterValidator(_base)] = ""
    """The other agent's ``[mqtt] base_topic``; default ``edge-agent/<node_id>``."""
    timeout_seconds: float = Field(default=DEFAULT_TIMEOUT_SECONDS, gt=0, le=MAX_TIMEOUT_SECONDS)
    """How long a command waits for the node's answer; it is also the request's expiry, so a
    command never outlives it."""
    simulate: bool = False
    """The node's allowlisted pins in memory (:mod:`peripherals.simulated_board`): no broker."""

    @property
    def base(self) -> str:
        return self.base_topic or f"edge-agent/{self.node_id}"


def _node(name: str, options: NodeBoardOptions, context: BoardContext) -> Board:
    from edge.fleet.node_board import NodeBoard

    pins = options.pins
    if options.simulate:
        from peripherals.simulated_board import NODE_MODES, SimulatedBoard

        return SimulatedBoard(name, "node", dict.fromkeys(pins, NODE_MODES), str,
                              aliases=options.aliases)
    return NodeBoard(name, options.node_id, options.base, pins=pins,
                     timeout=options.timeout_seconds, aliases=options.aliases)


SPEC = BoardSpec("node", NodeBoardOptions, _node)
