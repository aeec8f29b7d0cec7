"""Build a board driver from its config section. Adding a board type touches one line here."""

from __future__ import annotations

from peripherals.base import Board


def create_board(name: str, kind: str, options: dict, pin_factory=None) -> Board:
    """``options`` are the board's config keys other than ``type`` and ``pins``."""
    if kind == "gpio":
        from peripherals.gpio import GpioBoard

        return GpioBoard(name, simulate=options.get("simulate", True),
                         aliases=options.get("aliases"), pin_factory=pin_factory)
    raise ValueError(f"unknown board type {kind!r}")
