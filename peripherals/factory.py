"""Build a board driver from its config section. Adding a board type touches one line here."""

from __future__ import annotations

from typing import Any

from peripherals.base import Board


def create_board(name: str, kind: str, options: dict[str, Any],
                 pin_factory: Any = None) -> Board:
    """``options`` are the board's config keys other than ``type`` and ``pins``."""
    if kind == "gpio":
        from peripherals.gpio import GpioBoard

        return GpioBoard(name, simulate=options.get("simulate", True),
                         aliases=options.get("aliases"), pin_factory=pin_factory,
                         factory_name=options.get("pin_factory", "auto"))
    if kind == "stm32":
        from peripherals.stm32 import Stm32Board

        return Stm32Board(name, options["port"], baudrate=options.get("baudrate", 115200),
                          aliases=options.get("aliases"),
                          watchdog_ms=options.get("watchdog_ms", 1000),
                          request_timeout=options.get("request_timeout_seconds", 0.5))
    if kind == "arduino":
        from peripherals.arduino import ArduinoBoard

        return ArduinoBoard(name, options["port"], baudrate=options.get("baudrate", 57600),
                            aliases=options.get("aliases"),
                            watchdog_ms=options.get("watchdog_ms", 1000),
                            sampling_interval_ms=options.get("sampling_interval_ms", 19))
    raise ValueError(f"unknown board type {kind!r}")
