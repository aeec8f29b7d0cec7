"""The boards the config describes, built and checked before anything opens: each
``[boards.NAME]``'s driver (by its type, :mod:`peripherals.factory`), the pins its section
allowlists (:func:`edge.hardware.pins.pin_table`), and how a simulated Pi header came to be simulated.

Every alias and pin that could never work, on every board, is one ConfigError (exit 2) naming
each at its dotted key under the config file, as the rules' and sensors' problems are
(:func:`edge.config.loader.invalid_config`)::

    /etc/edge-agent/config.toml: invalid configuration
      boards.gpio.pins.nosuchpin: 'nosuchpin' is not a GPIO pin name; use names like GPIO17, 17 or BOARD11
      boards.uno.aliases.fan: 'D1': D0 and D1 carry the serial link to the agent
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from edge.config.boards import BoardConfig
from edge.config.loader import invalid_config
from edge.config.model import Config
from edge.core.ratelimit import SharedWindow
from edge.core.validation import Problem
from edge.hardware.door import Hardware
from edge.hardware.pin_values import PinMeanings
from edge.hardware.pins import Pin, pin_table
from edge.security.approvals import ApprovalGate
from edge.security.policy import RATE_WINDOW_SECONDS, SecurityPolicy, SwitchBudget
from peripherals.base import Board, BoardContext
from peripherals.exc import UnknownPin
from peripherals.factory import create_board

ONE_SHOT_RATES = "one-shot-actuations.json"
ONE_SHOT_SWITCHES = "one-shot-switches.json"


def build_boards(config: Config, context: BoardContext) -> tuple[dict[str, Board], list[Pin]]:
    """Each ``[boards.NAME]``'s driver (not connected) and the pins it allowlists; every alias
    and pin that could never work, on every board, in one ConfigError (exit 2)."""
    problems: list[Problem] = []
    boards: dict[str, Board] = {}
    pins: list[Pin] = []
    for name, section in config.boards.items():
        board = _board(name, section, context, problems)
        if board is not None:
            boards[name] = board
            pins.extend(pin_table(name, section, board, problems))
    if problems:
        raise invalid_config(problems, config.origin)
    return boards, pins


def _board(name: str, section: BoardConfig, context: BoardContext,
           problems: list[Problem]) -> Board | None:
    """The board's driver; when an alias names no pin of it, each such alias goes to
    ``problems`` and the driver is built with the others (its pins are still checked)."""
    try:
        return create_board(name, section.type, section, context)
    except UnknownPin as exc:
        first = exc
    try:
        bare = create_board(name, section.type, section.model_copy(update={"aliases": {}}), context)
    except UnknownPin:
        problems.append(Problem(("boards", name), "value", str(first)))
        return None
    kept, found = {}, len(problems)
    for alias, target in section.aliases.items():
        try:
            bare.canonical(target)
        except UnknownPin as exc:
            problems.append(Problem(("boards", name, "aliases", alias), "value", str(exc)))
        else:
            kept[alias] = target
    if len(problems) == found:  # no alias was it: say what the board said
        problems.append(Problem(("boards", name), "value", str(first)))
        return bare
    try:
        return create_board(name, section.type, section.model_copy(update={"aliases": kept}), context)
    except UnknownPin:
        return bare


def simulation_details(config: Config) -> dict[str, str]:
    """How each simulated Pi-header board came to be simulated, in the config's own words."""
    details = {}
    for name, section in config.boards.items():
        if section.simulate:
            how = ("simulate = true" if "simulate" in section.model_fields_set else
                   "simulate is on by default")
            details[name] = (f"simulated pins ({how}; set [boards.{name}] simulate = false on "
                             "a Pi to drive the real header)")
    return details


def build_hardware(config: Config, *, resident: bool, pin_factory: Any = None,
                   hold_seconds: float | None = None, state_dir: Path | None = None,
                   approvals: ApprovalGate | None = None,
                   sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
                   monotonic: Callable[[], float] = time.monotonic) -> Hardware:
    """Boards, their pins and the policy from config; aliases and pins that could never work
    (unknown, a mode the pin cannot take, two keys for one pin) are one ConfigError naming every
    one at its key, under the config file (:func:`build_boards`).
    ``state_dir``: where one-shot commands (not ``resident``) count actuations and each pin's
    switches together.
    ``approvals``: the agent's gate (its runtime builds it, with the channels that answer it);
    without one, a gate for ``[security] autonomy`` that no channel answers (direct commands
    need none; what a model asks under ``supervised`` is refused). ``sleep`` and ``monotonic``:
    the agent's clock, which the ``max_on_seconds`` timers and the rate limits follow."""
    boards, pins = build_boards(config, BoardContext(pin_factory))
    gate = approvals or ApprovalGate.from_config(config.security)
    rates = switches = None
    if not resident and state_dir is not None:
        rates = SharedWindow(RATE_WINDOW_SECONDS, state_dir / ONE_SHOT_RATES)
        switches = SwitchBudget(SharedWindow(RATE_WINDOW_SECONDS, state_dir / ONE_SHOT_SWITCHES))
    policy = SecurityPolicy([p.rule for p in pins], config.security.max_actuations_per_minute,
                            approvals=gate, rates=rates, switches=switches, clock=monotonic)
    return Hardware(boards, pins, policy, resident=resident, hold_seconds=hold_seconds,
                    meanings=PinMeanings.from_config(config, boards, pins),
                    details={} if pin_factory is not None else simulation_details(config),
                    sleep=sleep)
