"""``edge-cli safe-state``: drive every allowlisted output of the Pi header to its safe level, with
no agent running, and do nothing else.

The service runs it after the agent has stopped (``ExecStopPost=``), however it stopped: after a
SIGKILL, an OOM kill or a crash no code of the agent's ran, and the header's lines keep the level
they had. It is quick and touches as little as it can: it reads only the ``[boards]`` tables of
the config (a mistake elsewhere in the file does not stop it), builds no runtime, and opens no
serial port (Arduino and STM32 boards have their firmware watchdog). An output with no declared
``safe`` level goes off; ``active_low`` is honoured (a safe "off" relay is a high line).

While an agent runs, it owns the pins: the command touches nothing and exits 0 (under
``ExecStopPost=`` that agent is another one, and it returns its outputs to safe itself).
Exit 0 when every output is at its safe level (or there is none), 1 when one could not be
driven, 2 for a config it cannot read.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from edge.cli.output import emit
from edge.control.ops import OpResult

if TYPE_CHECKING:
    from edge.config.boards import BoardConfig
    from edge.config.locate import RawConfig
    from peripherals.base import Board

SYSTEMD_RESULT = ("SERVICE_RESULT", "EXIT_CODE", "EXIT_STATUS")
"""What systemd tells ``ExecStopPost=`` commands about how the agent ended."""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
    parser = sub.add_parser(
        "safe-state", parents=[common],
        help="drive the Pi header's outputs to their safe levels (no agent running)",
        description="Drive every allowlisted output of the Pi header ([boards.NAME] type gpio) "
                    "to its safe level (off when it declares none), and nothing else. For when "
                    "no agent is running: the service runs it after the agent stops "
                    "(ExecStopPost=), so a SIGKILL or an OOM kill does not leave a relay on. "
                    "With an agent running it touches nothing (the agent owns the pins) and "
                    "exits 0. Exit 1 when an output could not be driven.")
    parser.set_defaults(handler=run)


@dataclass
class OutputReport:
    """One header output after the command: where, its safe level, and whether it got there."""

    board: str
    pin: str
    names: list[str]
    safe: str
    line: str
    simulated: bool
    ok: bool = False
    error: str | None = None

    def describe(self) -> str:
        names = f" ({', '.join(self.names)})" if self.names else ""
        where = f"{self.board}:{self.pin}{names}"
        if not self.ok:
            return f"{where}: not driven: {self.error}"
        mock = ", mock pin" if self.simulated else ""
        return f"{where} safe {self.safe} (line {self.line}{mock})"


def run(args: argparse.Namespace) -> int:
    from edge.config.locate import load_raw
    from edge.core.ownership import running_agent
    from edge.core.paths import lock_candidates

    raw = load_raw(args.config)
    configured = (raw.data.get("paths") or {}).get("state_dir")
    owner = running_agent(lock_candidates(configured if isinstance(configured, str) else None))
    if owner is not None:
        return emit(OpResult(True, f"an agent is running (pid {owner[1]}, lock {owner[0]}): it "
                             "owns the pins and returns them to their safe levels when it stops; "
                             "nothing done", {"agent_pid": owner[1], "outputs": []}), args.json)
    import asyncio

    ended = _ended()
    if ended:  # the reason the next start gives if this was an abnormal end (edge.safe_mode)
        from edge.core.paths import state_dir
        from edge.safe_mode import RunLedger

        RunLedger.in_state_dir(state_dir(configured if isinstance(configured, str) else None)
                               ).note_end(", ".join(f"{k}={v}" for k, v in ended.items()))
    reports = asyncio.run(drive_header_safe(_boards(raw)))
    return emit(_result(reports, ended), args.json)


def _boards(raw: RawConfig) -> dict[str, BoardConfig]:
    """The validated ``[boards]`` tables alone: every other section keeps its default."""
    from pydantic import ValidationError

    from edge.config.loader import format_invalid
    from edge.config.model import Config
    from edge.core.exc import ConfigError

    tables = {"boards": raw.data["boards"]} if "boards" in raw.data else {}
    try:
        return Config.model_validate(tables).boards
    except ValidationError as exc:
        origin = str(raw.path) if raw.path else "configuration (built-in defaults + environment)"
        raise ConfigError(format_invalid(exc, origin, raw.env_keys)) from None


async def drive_header_safe(boards: dict[str, BoardConfig]) -> list[OutputReport]:
    """Claim each output of every ``gpio`` board at its safe level, then release the board (a
    high line stays driven until this process exits, as the agent's own shutdown leaves it)."""
    reports: list[OutputReport] = []
    for name, section in boards.items():
        if section.type == "gpio":
            reports.extend(await _drive_board(name, section))
    return reports


async def _drive_board(name: str, section: BoardConfig) -> list[OutputReport]:
    from peripherals.base import PinMode
    from peripherals.exc import BoardError
    from peripherals.factory import create_board

    board = create_board(name, section.type, section)
    simulated = board.status().simulated
    reports = []
    for key, pin in section.pins.items():
        if pin.mode in (PinMode.OUTPUT, PinMode.PWM):
            safe = pin.safe or "off"
            high = (safe == "on") != pin.active_low
            report = OutputReport(name, key, [], safe, "high" if high else "low", simulated)
            try:
                report.pin = board.resolve(key)
                report.names = [a for a in section.aliases if board.resolve(a) == report.pin]
            except BoardError as exc:
                report.error = str(exc)
            reports.append(report)
    try:
        await board.connect()
    except BoardError as exc:
        for report in reports:
            report.error = report.error or str(exc)
        return reports
    try:
        for report in reports:
            if report.error is None:
                await _drive(board, report)
    finally:
        await board.close()
    return reports


async def _drive(board: Board, report: OutputReport) -> None:
    """Claim the line as a plain output already at its safe level (a PWM pin's safe level is
    fully on or off), and keep a high one driven until the process exits."""
    from peripherals.base import PinMode
    from peripherals.exc import BoardError

    high = report.line == "high"
    try:
        await board.setup_pin(report.pin, PinMode.OUTPUT, initial=high)
        failed = await board.apply_safe_state({report.pin: high})
    except BoardError as exc:
        report.error = str(exc)
        return
    report.ok = not failed
    if failed:
        report.error = "the line did not take the level (see the safe_state_failed line above)"


def _ended() -> dict[str, str]:
    """How the agent ended, when systemd runs this as ``ExecStopPost=`` (empty otherwise)."""
    return {name.lower(): os.environ[name] for name in SYSTEMD_RESULT if os.environ.get(name)}


def _result(reports: list[OutputReport], ended: dict[str, str]) -> OpResult:
    data: dict[str, Any] = {"outputs": [asdict(r) for r in reports], **ended}
    after = (" after the agent ended (" + ", ".join(f"{k}={v}" for k, v in ended.items()) + ")"
             if ended else "")
    lines = [report.describe() for report in reports]
    failed = [r for r in reports if not r.ok]
    if failed:
        head = f"{len(failed)} of {len(reports)} header outputs not at their safe level{after}:"
        return OpResult(False, "\n  ".join([head, *lines]), data, 1)
    if not reports:
        return OpResult(True, f"no Pi header outputs are configured; nothing to do{after}", data)
    return OpResult(True, "\n".join([f"header outputs at their safe levels{after}:",
                                     *(f"  {line}" for line in lines)]), data)
