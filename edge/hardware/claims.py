"""The pins a process has claimed on its boards, and their safe levels: the other half of the door
to the pins (:class:`edge.hardware.Hardware`), which acts on what is claimed here.

A running agent claims every allowlisted pin when its board comes up, each output at its safe
level (off when it has none: an active-low relay never clicks on while it is claimed), and tells
firmware with a watchdog those levels; at shutdown it drives every claimed output back to them
and records that it did. A one-shot command claims only what it touches and adopts the level an
output already has.

>>> from peripherals.base import PinMode
>>> relay = Pin("gpio", "GPIO22", PinMode.OUTPUT, safe=False, active_low=True)
>>> safe_levels([relay, Pin("gpio", "GPIO27", PinMode.INPUT)], "gpio")
{'GPIO22': True}
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping

from edge.hardware.outcomes import Outcomes
from edge.hardware.pins import Pin
from edge.security.policy import SwitchBudget
from peripherals.base import Board, PinMode
from peripherals.exc import BoardError, BoardUnavailable

log = logging.getLogger(__name__)


def safe_levels(pins: Iterable[Pin], board: str) -> dict[str, bool]:
    """Each output's safe level on ``board`` as a line level (True: high): a safe "off" on an
    active-low pin is a high line."""
    return {p.pin: p.line(p.safe) for p in pins if p.board == board and p.safe is not None}


class PinClaims:
    def __init__(self, boards: Mapping[str, Board], pins: Mapping[tuple[str, str], Pin],
                 switches: SwitchBudget, outcomes: Outcomes, *, resident: bool):
        """``switches``: each pin's budget of switches, told what a claim leaves the pin at;
        ``outcomes``: told of the shutdown's safe state; ``resident``: a running agent (claims
        set outputs to their safe level, shutdown returns them there)."""
        self.boards, self.pins = boards, pins
        self._switches, self._outcomes, self.resident = switches, outcomes, resident
        self._claimed: set[tuple[str, str]] = set()
        self.held: set[str] = set()
        """Boards lent out (:meth:`lend`): the board supervisor leaves them alone."""
        self.left_safe: list[tuple[Pin, bool]] = []
        """The shutdown's safe state (:meth:`release`): each claimed output, and whether its
        board took the safe level."""

    async def claim(self, rule: Pin) -> None:
        """Set the pin up; an output starts at its safe level (off when it has none), so an
        active-low relay never clicks on while it is claimed. A one-shot command adopts an
        output the board already drives at the level it has (a read reports it, a write does
        not pass through the safe level)."""
        key = (rule.board, rule.pin)
        if key in self._claimed:
            return
        if rule.board in self.held:
            raise BoardUnavailable(f"board {rule.board} is lent out to be flashed (`edge-cli "
                                   "firmware flash`); it is back when the flash ends, or after "
                                   "`boards.reattach`")
        board = self.boards[rule.board]
        initial = rule.line(bool(rule.safe)) if rule.mode is not PinMode.INPUT else False
        setup = board.setup_pin if self.resident else board.adopt_pin
        await setup(rule.pin, rule.mode, rule.pull, initial=initial, bounce_ms=rule.bounce_ms)
        self._claimed.add(key)
        if self.resident and rule.mode is not PinMode.INPUT:
            self._switches.known(rule.board, rule.pin, float(bool(rule.safe)))

    async def board_up(self, name: str) -> None:
        """Claim the board's allowlisted pins and tell firmware with a watchdog the safe values.
        A pin that cannot be claimed is logged and retried on its next use; the others work.
        What its outputs hold is unknown until they are set again (a board that came back may
        have driven its safe values)."""
        for rule in self.pins.values():
            if rule.board == name:
                self._switches.known(rule.board, rule.pin, None)
                try:
                    await self.claim(rule)
                except BoardError as exc:
                    log.error("pin_claim_failed board=%s pin=%s error=%r", name, rule.pin, str(exc))
        try:
            await self.boards[name].declare_safe_state(safe_levels(self.pins.values(), name))
        except BoardError as exc:
            log.error("safe_state_declare_failed board=%s error=%r", name, str(exc))

    async def release(self) -> None:
        """Release the boards; a resident agent first drives every claimed output to its safe
        level and records it (a one-shot command leaves the level it was asked for)."""
        for name, board in self.boards.items():
            safe = {pin: level for pin, level in safe_levels(self.pins.values(), name).items()
                    if (name, pin) in self._claimed}
            try:
                if self.resident:
                    failed = await board.apply_safe_state(safe)
                    self._log_safe_state(name, safe, failed)
                    rules = [self.pins[(name, pin)] for pin in safe if (name, pin) in self.pins]
                    await self._outcomes.safe_state(rules, failed)
                    self.left_safe += [(rule, rule.pin not in failed) for rule in rules]
                await board.close()
            except BoardError as exc:
                log.error("board_shutdown_failed board=%s error=%r", name, exc)
        self._claimed.clear()

    def safe_state_words(self) -> str:
        """What the shutdown's safe state did, for a person at the terminal: ``outputs are at
        their safe levels (led off, pump off)``, or which outputs the boards refused."""
        def said(rule: Pin) -> str:
            return rule.aliases[0] if rule.aliases else f"{rule.board}:{rule.pin}"

        done = [f"{said(rule)} {'on' if rule.safe else 'off'}" for rule, ok in self.left_safe if ok]
        refused = [said(rule) for rule, ok in self.left_safe if not ok]
        if refused:
            return (f"{', '.join(refused)} could NOT be put at the safe level (the board "
                    "refused): check the wiring before leaving it" + (f"; {', '.join(done)}"
                                                                       if done else ""))
        if not done:
            return "no output was claimed, so none needed its safe level"
        return f"outputs are at their safe levels ({', '.join(done)})"

    async def lend(self, name: str) -> list[str]:
        """Give the board up for a while (to be flashed): drive its claimed outputs to their
        safe levels and record it, close it, and keep the supervisor from reconnecting it until
        :meth:`take_back`. Returns the outputs that could not be made safe."""
        board = self.boards[name]
        self.held.add(name)
        safe = {pin: level for pin, level in safe_levels(self.pins.values(), name).items()
                if (name, pin) in self._claimed}
        failed = await board.apply_safe_state(safe) if board.connected else list(safe)
        self._log_safe_state(name, safe, failed)
        await self._outcomes.safe_state(
            [self.pins[(name, pin)] for pin in safe if (name, pin) in self.pins], failed)
        await board.close()
        self._claimed -= {key for key in self._claimed if key[0] == name}
        log.info("board_lent board=%s", name)
        return failed

    def take_back(self, name: str) -> None:
        """End :meth:`lend`: the supervisor connects the board again and claims its pins (each
        output at its safe level)."""
        self.held.discard(name)
        log.info("board_taken_back board=%s", name)

    def _log_safe_state(self, board: str, levels: dict[str, bool], failed: list[str]) -> None:
        for pin, line in levels.items():
            rule = self.pins.get((board, pin))
            if pin in failed or rule is None:
                continue
            log.info("safe_state board=%s pin=%s value=%s line=%s", board, pin,
                     "on" if rule.safe else "off", "high" if line else "low")
