"""Board drivers for edge-agent.

This package knows nothing about agents, channels or models: it turns pin names into pins and
pins into electrical states, behind the :class:`peripherals.base.Board` protocol. Each board type
registers a :class:`peripherals.base.BoardSpec` (README.md: "Adding a board type").

>>> from peripherals.gpio import GpioBoard
>>> board = GpioBoard("gpio", simulate=True, aliases={"led": "GPIO17"})
>>> board.resolve("led")
'GPIO17'

The face is lazy (PEP 562): the names in ``__all__`` load from their modules when first used, so
importing any module of the package (which runs this file first) loads none of them. Finding boards
(:mod:`peripherals.discovery`) and the Pi's pin factories (:mod:`peripherals.pin_factory`) are used
by module.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from peripherals.base import (
        Board,
        BoardContext,
        BoardEvent,
        BoardListener,
        BoardOptions,
        BoardSpec,
        BoardStatus,
        DeviceNode,
        PinInfo,
        PinMode,
        PinState,
        Pull,
    )
    from peripherals.exc import (
        BoardError,
        BoardUnavailable,
        PinModeError,
        SensorError,
        SensorUnavailable,
        UnknownPin,
    )
    from peripherals.factory import create_board
    from peripherals.supervisor import BoardSupervisor

__all__ = ["Board", "BoardContext", "BoardError", "BoardEvent", "BoardListener", "BoardOptions",
           "BoardSpec", "BoardStatus", "BoardSupervisor", "BoardUnavailable", "DeviceNode", "PinInfo",
           "PinMode", "PinModeError", "PinState", "Pull", "SensorError", "SensorUnavailable",
           "UnknownPin", "create_board"]

_HOMES = {
    "base": ("Board", "BoardContext", "BoardEvent", "BoardListener", "BoardOptions", "BoardSpec",
             "BoardStatus", "DeviceNode", "PinInfo", "PinMode", "PinState", "Pull"),
    "exc": ("BoardError", "BoardUnavailable", "PinModeError", "SensorError", "SensorUnavailable",
            "UnknownPin"),
    "factory": ("create_board",),
    "supervisor": ("BoardSupervisor",),
}
"""Each module, and the names of ``__all__`` it holds."""


def __getattr__(name: str) -> object:
    for module, names in _HOMES.items():
        if name in names:
            return getattr(import_module(f"{__name__}.{module}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
