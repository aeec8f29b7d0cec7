"""What the runtime needs to know of a chat channel, in one small spec per channel.

A :class:`ChannelSpec` names the channel (its ``[channels.NAME]`` key), finds its config section,
builds the channel from that section and a :class:`ChannelContext`, and says whether people pair
with it (the allowlist key ``/pair CODE`` adds to), where its admins are listed and how
``edge-cli doctor`` checks the service it talks to. The registry (:mod:`edge.channels.registry`)
holds the specs; the runtime, the pairing, the admin table, the automation's list of channels
and the doctor read them and nothing else.

This module stays light (no pydantic, no adapter): the command line reads the registry to parse
its arguments.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Literal, Protocol, TextIO, TypeVar

if TYPE_CHECKING:
    from edge.channels.base import Channel
    from edge.channels.mqtt import ChatTopic
    from edge.channels.pairing import Pair
    from edge.channels.web import ChatHub
    from edge.config.model import Config

Access = tuple[list[str], bool, int]
"""(allowed senders, mention required in groups, messages per minute per sender)."""


class ChannelSection(Protocol):
    """What every channel's section says: whether the channel runs, and who may talk to it."""

    @property
    def enabled(self) -> bool: ...

    def access(self) -> Access: ...


S = TypeVar("S", bound=ChannelSection)


class ApprovalAnswers(Protocol):
    """Where a channel records a person's answer to an approval request (the agent's approval
    gate): ``decision`` is the word they chose (``approve``, ``deny``, ``always``); returns what
    to tell them."""

    def answer(self, channel: str, token: str, responder: str, decision: str) -> str: ...


@dataclass(frozen=True)
class ChannelContext:
    """What the runtime hands every channel it builds (each takes what it uses)."""

    config: Config
    state_dir: Path
    allowed: set[str]
    """The channel's allowlist, shared with the agent's preflight: pairing adds to it."""
    approvals: ApprovalAnswers | None = None
    pair: Pair | None = None
    """Redeems a pairing code (channel, sender, code) -> paired."""
    commands: Callable[[], list[tuple[str, str]]] = list
    """(command, description) for a channel's command menu (loaded when asked for)."""
    stdin: TextIO | None = None
    stdout: TextIO | None = None
    mqtt: ChatTopic | None = None
    web: ChatHub | None = None
    """The web page's chat (``[web] listen``)."""


@dataclass(frozen=True)
class ServiceCheck:
    """What ``edge-cli doctor`` says of the service a channel talks to."""

    status: Literal["ok", "fail"]
    detail: str
    fix: str = ""


@dataclass(frozen=True)
class ChannelSpec(Generic[S]):
    """One chat channel, as the runtime sees it.

    >>> from edge.channels.registry import CHANNELS
    >>> [(s.name, s.pairs_into) for s in CHANNELS.values()]
    [('cli', None), ('telegram', 'allowed_users'), ('signal', 'allowed_numbers'), ('mqtt', None), ('web', None)]
    """

    name: str
    """The channel's name: its ``[channels.NAME]`` key, ``ChannelMessage.channel``, ``NAME:ID``."""
    section: Callable[[Config], S]
    """Its config section (``config.channels.NAME``)."""
    build: Callable[[S, ChannelContext], Channel | None]
    """The channel, for an enabled section; None when it cannot run here (the terminal channel
    without a terminal)."""
    pairs_into: str | None = None
    """The allowlist key ``/pair CODE`` adds the sender to (``allowed_users``); None: no pairing."""
    admins: Callable[[S], Iterable[str]] | None = None
    """Who the section lists as admins; None: the channel has no admins."""
    check: Callable[[Mapping[str, Any]], ServiceCheck | None] | None = None
    """``edge-cli doctor``'s one cheap request to the channel's service, given its raw table
    (file and environment); None when the table does not enable it."""
    receipts: Callable[[S], bool | None] | None = None
    """The section's own ``receipts`` (a None answer: ``[agent] receipts`` decides); None: the
    channel has no such key."""
    exposure: Callable[[S], str | None] | None = None
    """What ``edge-cli config check`` and ``doctor`` warn of in the section, a setting that lets
    strangers in (:func:`edge.doctor.exposure.exposure_warnings`); a None answer: nothing."""
