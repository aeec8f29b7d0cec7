"""What happened at the door to the pins, as one record: every actuation, refusal, auto-off,
safe state and trip, whoever asked and through whichever door.

The hardware (:class:`edge.hardware.Hardware`) builds one :class:`Actuation` per outcome and
awaits each :class:`ActuationRecorder` it was given before it answers the caller, so a record
(the audit trail's SQLite row, a turn's receipt) exists before the requester is told.

>>> done = Actuation(at=0.0, board="gpio", pin="GPIO17", label="pump", action="write",
...                  asked=1.0, read_back=1.0, outcome="ok", caller="telegram:42",
...                  door="telegram", why="turn 7")
>>> done.receipt()
'pump: on (read back on)'
>>> Actuation(at=0.0, board="gpio", pin="GPIO18", label="fan", action="write", asked=1.0,
...           outcome="refused", reason="interlock heat-or-cool").receipt()
'fan: refused, interlock heat-or-cool'

A call of another MCP server's tool that acts on the world (``[[mcp.servers]] actuates``) is a
record of its own kind, ``call``: ``board`` is the server, ``pin`` the tool, ``label``
``server.tool`` and ``detail`` the arguments.

>>> Actuation(at=0.0, board="ha", pin="HassTurnOn", label="ha.HassTurnOn", action="call",
...           asked=None, detail='{"name": "kitchen"}').receipt()
'ha.HassTurnOn {"name": "kitchen"}: done'
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal, Protocol

Outcome = Literal["ok", "refused", "failed"]
ACTIONS = ("write", "pwm", "servo", "safe", "auto-off", "safe-state", "trip", "call")
"""What was done: a switch, a duty, an angle, a return to the safe level (asked for), the
``max_on_seconds`` timer, the shutdown's safe state, an interlock's trip, a remote MCP tool's
call."""


@dataclass(frozen=True)
class Actuation:
    at: float
    """Unix time of the outcome."""
    board: str
    pin: str
    label: str
    """How people name the pin (``pump``), else ``board:pin``."""
    action: str
    asked: float | None
    """The logical value asked for: 1/0, a duty, an angle (None when the pin was unknown)."""
    read_back: float | None = None
    """The logical value the board reported after acting (None where it cannot say)."""
    outcome: Outcome = "ok"
    reason: str = ""
    """Why it was refused or failed."""
    caller: str = ""
    """``channel:sender`` of the requester (``agent`` for the agent's own timers and safe state)."""
    door: str = ""
    """The requester's channel: telegram, cli, local, mqtt, rule, schedule, agent..."""
    why: str = ""
    """The turn or message id, the rule, schedule or interlock name."""
    detail: str = ""
    """What else was asked: a remote tool call's arguments (``call``), short."""
    count: int = 1
    """How many identical refusals this record stands for (the audit trail folds a caller's
    repeated refusal into one record); ``at`` is then the last of them."""
    first_at: float | None = None
    """When the first of ``count`` identical refusals came (None: ``at``)."""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def receipt(self) -> str:
        """One line for a chat receipt: ``pump: on (read back on)``, ``fan: refused, why``."""
        if self.action == "call":
            called = f"{self.label} {self.detail}" if self.detail else self.label
            if self.outcome == "ok":
                return f"{called}: done"
            return f"{called}: {self.outcome}, {self.reason}" if self.reason else \
                f"{called}: {self.outcome}"
        if self.outcome == "refused":
            return f"{self.label}: refused, {self.reason}" if self.reason else \
                f"{self.label}: refused"
        if self.outcome == "failed":
            return f"{self.label}: failed, {self.reason}" if self.reason else \
                f"{self.label}: failed"
        asked = self._word(self.asked)
        if self.read_back is None:
            return f"{self.label}: {asked} (not read back)"
        return f"{self.label}: {asked} (read back {self._word(self.read_back)})"

    def _word(self, value: float | None) -> str:
        if value is None:
            return "?"
        if self.action in ("write", "safe", "auto-off", "safe-state", "trip"):
            return "on" if value >= 0.5 else "off"
        if self.action == "pwm":
            return f"duty {value:.2f}"
        return f"{value:g}°"


class ActuationRecorder(Protocol):
    """Told of every outcome at the door; awaited before the caller hears of it (so a durable
    recorder makes the record durable first). A recorder that raises is logged, never undoes
    the actuation."""

    async def record(self, actuation: Actuation) -> None: ...
