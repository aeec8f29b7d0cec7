"""Build a board driver from its config section. Adding a board type touches one line here, in
:data:`BOARDS`'s table (peripherals/README.md says how); another package registers its own
through the ``edge_agent.boards`` entry point group.

>>> board = create_board("pi", "gpio", {"simulate": True})
>>> board.kind, board.resolve("led")
('gpio', 'GPIO17')
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from peripherals.base import Board, BoardContext, BoardOptions, BoardSpec
from peripherals.registry import Registry

BOARDS: Registry[BoardSpec[Any]] = Registry("board", "edge_agent.boards", {
    "gpio": "peripherals.board_types:GPIO",
    "arduino": "peripherals.board_types:ARDUINO",
    "stm32": "peripherals.board_types:STM32",
}, BoardSpec)
"""Every board type, by the ``type`` its section names."""


def create_board(name: str, kind: str, options: BoardOptions | Mapping[str, Any],
                 context: BoardContext | None = None) -> Board:
    """The driver of board ``name``, not yet connected. ``options`` is its validated section (an
    instance of the type's options model), or the keys to validate into one; an unknown
    ``kind`` is a ValueError naming the known ones."""
    spec = BOARDS.get(kind)
    if not isinstance(options, spec.options):
        options = spec.options.model_validate(options)
    return spec.build(name, options, context or BoardContext())
