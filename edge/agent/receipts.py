"""Receipts: the hardware, not the model, says what a turn did to the pins.

The agent opens a turn in a :class:`ReceiptBook` (an ActuationRecorder the hardware awaits at
its door) under the turn's ``why`` (its message id); every actuation and refusal the turn's
requester causes lands there, and :func:`with_receipt` ends the reply with one line the agent
writes from what the board read back. A reply that claims a switch when the turn switched
nothing is told so plainly.

>>> from edge.core.actuation import Actuation
>>> done = [Actuation(at=0.0, board="gpio", pin="GPIO22", label="pump", action="write",
...                   asked=1.0, read_back=1.0),
...         Actuation(at=0.0, board="gpio", pin="GPIO23", label="fan", action="write",
...                   asked=1.0, outcome="refused", reason="interlock heat-or-cool")]
>>> print(with_receipt("Pump is on; the fan is not allowed.", done))
Pump is on; the fan is not allowed.
<BLANKLINE>
Receipt: pump: on (read back on) · fan: refused, interlock heat-or-cool
>>> print(with_receipt("I've turned the pump on.", []))
I've turned the pump on.
<BLANKLINE>
Note from the agent: no pin was switched in this turn.
>>> with_receipt("The pump is off.", [])
'The pump is off.'
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

from edge.core.actuation import Actuation

NOTHING_SWITCHED = "Note from the agent: no pin was switched in this turn."
_VERBS = (r"(?:turned|switched|flipped|toggled|locked|unlocked|opened|closed|started|stopped|"
          r"activated|deactivated|powered|shut|dimmed|moved|energi[sz]ed)")
CLAIM = re.compile(
    r"\bI(?:'ve|\s+have|\s+just|\s+now|\s+went\s+ahead\s+and)?\s+(?:just\s+|now\s+|successfully\s+"
    rf"|already\s+)?{_VERBS}\b"
    r"|\bI(?:'ve|\s+have)?\s+(?:just\s+)?set\s+(?:the\s+|your\s+)?[\w -]{1,30}?\s+(?:to\s+)?"
    r"(?:on|off|open|closed|\d)"
    rf"|\b(?:has|have)\s+(?:now\s+)?been\s+(?:successfully\s+)?{_VERBS}\b"
    r"|\b(?:is|are)\s+now\s+(?:on|off|open|closed|locked|unlocked|running|active|at)\b"
    r"|\b(?:turning|switching)\s+(?:it|them|the\s+[\w-]+)\s+(?:on|off)\s+now\b"
    rf"|\b(?:is|are|was|were)\s+(?:now|just)\s+(?:been\s+)?{_VERBS}\b"
    rf"|(?:^|[.!:]\s+)(?:(?:ok(?:ay)?|done|sure)[,.!]?\s+)?{_VERBS}\s+(?:on|off|the|it|your)\b"
    r"|\bset\s+(?:on|off)\b|\bPWM\s+duty\s+\d|\bservo\s+at\s+\d|\bback\s+to\s+its\s+safe\s+level",
    re.IGNORECASE | re.MULTILINE)
"""What a reply that says it switched something looks like (English, common phrasings, and the
words the pin tools' results use: ``gpio:GPIO17 (led) set off``)."""


def claims_a_switch(reply: str) -> bool:
    """Whether ``reply`` says something was switched, opened, locked...

    >>> [claims_a_switch(t) for t in ("Done, I've switched the fan off.", "The led is now on.",
    ...  "I can't turn the pump on: it is not allowlisted.", "The led is on.",
    ...  "gpio:GPIO17 (led) set off", "Sure! Turned the pump on.", "Should I turn it on?")]
    [True, True, False, False, True, True, False]
    """
    return CLAIM.search(reply) is not None


def receipt_line(actuations: list[Actuation]) -> str:
    return "Receipt: " + " · ".join(a.receipt() for a in actuations)


def with_receipt(reply: str, actuations: list[Actuation]) -> str:
    """``reply`` ending with the turn's receipt (none for a turn that touched no pin), and the
    plain note when the reply claims a switch that no pin made."""
    lines = [reply]
    if actuations:
        lines.append(receipt_line(actuations))
    if not any(a.outcome == "ok" for a in actuations) and claims_a_switch(reply):
        lines.append(NOTHING_SWITCHED)
    return "\n\n".join(lines)


class ReceiptBook:
    """Collects the actuations of the turns that are open, by the requester's ``why``."""

    def __init__(self) -> None:
        self._open: dict[str, list[Actuation]] = {}

    async def record(self, actuation: Actuation) -> None:
        kept = self._open.get(actuation.why)
        if kept is not None:
            kept.append(actuation)

    @contextmanager
    def turn(self, why: str) -> Iterator[list[Actuation]]:
        """The list of what happens under ``why`` until the block ends."""
        kept: list[Actuation] = []
        self._open[why] = kept
        try:
            yield kept
        finally:
            self._open.pop(why, None)
