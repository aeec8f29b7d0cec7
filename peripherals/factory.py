"""Build a board driver from its config section. Adding a board type touches one line here."""

from __future__ import annotations

from typing import Any

from peripherals.base import Board


def create_board(name: str, kind: str, options: dict[str, Any],
                 pin_factory: Any = None) -> Board:
    """``options`` are the board's validated config keys other than ``type`` and ``pins``, every
    one present (the config model holds the defaults; nothing here repeats them)."""
    if kind == "gpio":
        from peripherals.gpio import GpioBoard

        return GpioBoard(name, simulate=options["simulate"], aliases=options["aliases"],
                         pin_factory=pin_factory, factory_name=options["pin_factory"])
    if kind == "stm32":
        from peripherals.stm32 import Stm32Board

        return Stm32Board(name, options["port"], baudrate=options["baudrate"],
                          aliases=options["aliases"], watchdog_ms=options["watchdog_ms"],
                          request_timeout=options["request_timeout_seconds"])
    if kind == "arduino":
        from peripherals.arduino import ArduinoBoard

        return ArduinoBoard(name, options["port"], baudrate=options["baudrate"],
                            aliases=options["aliases"], watchdog_ms=options["watchdog_ms"],
                            sampling_interval_ms=options["sampling_interval_ms"])
    raise ValueError(f"unknown board type {kind!r}")
