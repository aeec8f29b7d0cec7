"""Who asked for something: one explicit value passed down every call that acts for a person
(tools, the pin policy, approvals), never read from a context variable set floors above.

>>> asked = Requester("telegram", "42", reply_target="42")
>>> asked.caller, asked.asking_model().via_model
('telegram:42', True)
"""

from __future__ import annotations

from typing import NamedTuple


class Requester(NamedTuple):
    """Immutable and hashable; a named tuple rather than a dataclass, so that the CLI client's
    path (``edge-cli status``) does not import :mod:`dataclasses` and, with it, :mod:`inspect`."""

    channel: str
    """Where the request came from: ``telegram``, ``signal``, ``cli``, ``local`` (the socket)."""
    sender: str
    """Who on that channel: a user id, a phone number, a local user name or uid."""
    reply_target: str = ""
    """Where answers and approval prompts go (a chat id); empty when there is nowhere."""
    thread_id: str | None = None
    via_model: bool = False
    """The model chose the action (rather than a direct command from the person)."""
    why: str = ""
    """What it is for: the turn or message id, a rule's or schedule's name (the audit trail's
    "why"); empty when the sender says it already."""
    identity: str | None = None
    """What was verified about who asks, when that is not :attr:`caller` itself: an MCP client's
    bearer token (``token:claude``) or a local user's client over the control socket (``uid:1000
    mcp:claude-desktop``), a socket peer's uid (``uid:1000``); ``""`` when nothing was (a client
    that only named itself). None (the default): the caller is what its channel verified (a
    Telegram user id, a Signal number, the local terminal)."""

    @property
    def verified_as(self) -> str | None:
        """Whom what is remembered of this requester (an approval's *Always*) belongs to; None
        when nobody was verified, and nothing is remembered.

        >>> Requester("telegram", "42").verified_as, Requester("mcp", "x", identity="").verified_as
        ('telegram:42', None)
        """
        return self.caller if self.identity is None else (self.identity or None)

    @property
    def caller(self) -> str:
        """``channel:sender``, as logs and rate limits name a requester."""
        return f"{self.channel}:{self.sender}"

    def asking_model(self) -> Requester:
        """The same person, acting through the model's tool calls."""
        return self._replace(via_model=True)
