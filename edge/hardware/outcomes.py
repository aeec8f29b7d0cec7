"""What the door to the pins (:class:`edge.hardware.Hardware`) tells of every outcome.

Each actuation, refusal, failure, auto-off and the shutdown's safe state becomes one
:class:`~edge.core.actuation.Actuation` (who, through which door, why; what was asked and what
the board reads back), awaited by every recorder (the audit trail, a turn's receipts) before the
caller hears of it. A recorder that fails is logged and never undoes what the pin did. The latest
outcome of each pin is kept: the gpio tools report its read-back value.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence

from edge.core.actuation import Actuation, ActuationRecorder, Outcome
from edge.core.requester import Requester
from edge.hardware.pins import Pin, logical
from peripherals.base import Board

log = logging.getLogger(__name__)


def outcome(rule: Pin | None, action: str, asked: float | None, requester: Requester | None, *,
            board: str = "", pin: str = "", read_back: float | None = None,
            outcome: Outcome = "ok", reason: str = "") -> Actuation:
    """One record of an outcome at the door (``requester`` None: the agent's own timers and
    safe state; ``board`` and ``pin`` name what was asked for when it is no allowlisted pin)."""
    return Actuation(
        at=time.time(), board=rule.board if rule else board, pin=rule.pin if rule else pin,
        label=(rule.aliases[0] if rule.aliases else rule.pin) if rule else pin,
        action=action, asked=asked, read_back=read_back, outcome=outcome, reason=reason,
        caller=requester.caller if requester else "agent",
        door=requester.channel if requester else "agent",
        why=(requester.why or requester.sender) if requester else action)


class Outcomes:
    def __init__(self, boards: Mapping[str, Board], recorders: Sequence[ActuationRecorder] = ()):
        self._boards = boards
        self._recorders: list[ActuationRecorder] = list(recorders)
        self.last: dict[tuple[str, str], Actuation] = {}
        """Each pin's latest outcome."""

    def add(self, recorder: ActuationRecorder) -> Callable[[], None]:
        """Tell ``recorder`` of every outcome from now on; returns a function that stops it."""
        self._recorders.append(recorder)

        def remove() -> None:
            if recorder in self._recorders:
                self._recorders.remove(recorder)
        return remove

    async def record(self, actuation: Actuation) -> None:
        """Await every recorder with ``actuation`` (a durable one commits it first)."""
        if actuation.pin:
            self.last[(actuation.board, actuation.pin)] = actuation
        for recorder in list(self._recorders):
            try:
                await recorder.record(actuation)
            except Exception:
                log.exception("actuation_record_failed board=%s pin=%s action=%s",
                              actuation.board, actuation.pin, actuation.action)

    async def acted(self, rule: Pin, action: str, asked: float,
                    requester: Requester | None) -> Actuation:
        """An act that went through: recorded with what the pin reads back (a servo's angle
        cannot be read)."""
        done = outcome(rule, action, asked, requester,
                       read_back=await self.read_back(rule) if action != "servo" else None)
        await self.record(done)
        return done

    async def failed(self, rule: Pin, action: str, asked: float, requester: Requester | None,
                     reason: str) -> None:
        await self.record(outcome(rule, action, asked, requester, outcome="failed", reason=reason))

    async def refused(self, known: Pin | None, spec: str, action: str, asked: float | None,
                      requester: Requester, reason: str) -> None:
        """A change the door refused (the policy, an unknown pin, the one-shot guards)."""
        await self.record(outcome(known, action, asked, requester, board=known.board if known else "",
                                  pin=known.pin if known else spec, outcome="refused", reason=reason))

    async def safe_state(self, rules: Sequence[Pin], failed: Sequence[str]) -> None:
        """The shutdown's safe state on one board: ``failed`` names the pins it refused."""
        for rule in rules:
            asked = float(bool(rule.safe))
            if rule.pin in failed:
                await self.failed(rule, "safe-state", asked, None, "board refused it")
            else:
                await self.acted(rule, "safe-state", asked, None)

    async def read_back(self, rule: Pin) -> float | None:
        """What the board says the output now is (logical), or None where it cannot say."""
        try:
            return logical(rule, await self._boards[rule.board].read(rule.pin))
        except Exception as exc:  # a read-back is a report, never a reason to fail the act
            log.debug("read_back_failed board=%s pin=%s error=%r", rule.board, rule.pin, exc)
            return None
