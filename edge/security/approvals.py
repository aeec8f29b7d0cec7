"""Approvals for actuations (yes / no / always).

``[security] autonomy``:
- ``full``: no approvals;
- ``supervised`` (default): an actuation the *model* asks for needs the approval of the person
  who asked, through their channel (Telegram buttons, Signal token replies); the local terminal
  is trusted (it can run ``edge-cli gpio`` directly anyway); direct commands need none;
- ``readonly``: nothing actuates a pin, whoever asks; pins can only be read.

"Always" remembers the approval for that requester's verified identity, pin and action
(:attr:`Requester.verified_as`: a chat sender as its channel verified it, an MCP client by its
bearer token or by the local uid it runs as with its name, never by the name it gives itself):
until restart when the requester answered it, durably when an admin did
(:class:`edge.security.approval_store.ApprovalStore`, ``<state>/approvals.json``, listed and
revoked with ``edge-cli approvals``).
A requester nobody verified (an MCP client on loopback without tokens) is never offered
"Always" and an "always" from it counts as nothing. No answer within the timeout means deny.
Only the requester, or a configured admin, can answer. Tokens are case-insensitive (``A1B2C3
approve`` answers ``a1b2c3``).

Trust per caller lets some actuations through without asking anyone: a pin with ``approval =
false`` (:class:`edge.security.policy.PinRule`), an MCP token's ``[mcp.trust]`` (``claude =
["gpio:GPIO17"]`` or ``["*"]``), and with ``[security] admins_approve_themselves`` an admin's own
model turns on the chat channels.

Admins (``[channels.telegram] admins``, ``[channels.signal] admins``: each channel's spec says
where its admins are, :mod:`edge.channels.registry`) are who may change the agent for everyone
from a network channel (``/model NAME``), answer anyone's approval and see the full ``/status``;
the local terminal (channel ``cli``) is the operator and counts as an admin.

One gate per agent, built where the runtime is assembled (:mod:`edge.assembly`) with the admins
and the channels that ask, and handed to the pin policy, the channels (which record answers
through :meth:`ApprovalGate.answer`, the one path), the agent and the automation tools.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
import secrets
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from edge.core.requester import Requester

if TYPE_CHECKING:
    from edge.config.model import SecurityConfig
    from edge.security.approval_store import ApprovalStore

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT_SECONDS = 120.0
TRUSTED_CHANNELS = frozenset({"cli"})
"""The local terminal: the operator, who needs no approval and counts as an admin."""


def is_admin(requester: Requester, admins: Mapping[str, frozenset[str]]) -> bool:
    """The operator's terminal, or a sender listed as an admin of its channel.

    >>> is_admin(Requester("telegram", "42"), {"telegram": frozenset({"42"})})
    True
    >>> is_admin(Requester("telegram", "7"), {"telegram": frozenset({"42"})})
    False
    """
    return (requester.channel in TRUSTED_CHANNELS
            or requester.sender in admins.get(requester.channel, frozenset()))


class Decision(enum.StrEnum):
    APPROVE = "approve"
    DENY = "deny"
    ALWAYS = "always"


class Approver(Protocol):
    """A channel that may ask a person to approve (``supports_approvals``): sends ``prompt``
    carrying ``token``, offering *Always* only when ``ctx.verified_as`` is not None."""

    supports_approvals: bool

    async def request_approval(self, ctx: Requester, prompt: str, token: str) -> None: ...

    async def approval_expired(self, ctx: Requester, token: str) -> None: ...


ClientAsk = Callable[[str, bool], Awaitable[str]]
"""``ask(prompt, offer_always)``: asks the person at an MCP client (MCP elicitation) and returns
their answer, ``approve``, ``deny`` or ``always``."""


@dataclass
class PendingApproval:
    token: str
    requester: str
    """``channel:sender`` of who asked: only they (on that channel) or an admin may answer."""
    future: asyncio.Future[Decision]
    remembered_as: str | None = None
    """Whom an *Always* is remembered for (None: nobody verified; *Always* was not offered)."""
    summary: str = ""
    """What is asked (``switch gpio:GPIO17 (led) on``), as the prompt says it."""
    why: str = ""
    answered_by: str = ""
    """``channel:sender`` of the admin who answered (empty: the requester did)."""


@dataclass
class ApprovalGate:
    autonomy: str = "supervised"
    timeout: float = DEFAULT_TIMEOUT_SECONDS
    admins: Mapping[str, frozenset[str]] = field(default_factory=dict)
    """Channel -> senders who may answer anyone's approval (channels without admins are absent)."""
    approvers: Mapping[str, Approver] = field(default_factory=dict)
    """Channel -> the channel itself: the runtime's table of running channels, filled as they
    start; one that cannot ask (``supports_approvals`` false) is passed over."""
    _pending: dict[str, PendingApproval] = field(default_factory=dict)
    _always: set[tuple[str, str, str]] = field(default_factory=set)
    """(verified identity, target, action) an admin answered *Always* for."""
    watchers: list[Callable[[], None]] = field(default_factory=list)
    """Called whenever an approval starts waiting or stops (the web page's stream)."""
    trusted: Mapping[str, frozenset[str]] = field(default_factory=dict)
    """Verified identity (``token:claude``) -> targets it actuates without asking (``*``: all)."""
    admins_approve_themselves: bool = False
    """An admin's own model turns on a chat channel need no approval."""
    store: ApprovalStore | None = None
    """Where an admin's *Always* is kept across restarts (None: in memory only)."""
    _clients: dict[Requester, list[ClientAsk]] = field(default_factory=dict)
    """Requester -> how to ask the person at its MCP client, while its calls run."""

    @classmethod
    def from_config(cls, security: SecurityConfig, admins: Mapping[str, frozenset[str]] | None = None,
                    approvers: Mapping[str, Approver] | None = None, *,
                    trusted: Mapping[str, frozenset[str]] | None = None,
                    store: ApprovalStore | None = None) -> ApprovalGate:
        """The gate ``[security]`` describes (autonomy, approval_timeout_seconds,
        admins_approve_themselves), with the identities ``trusted`` (from ``[mcp.trust]``)."""
        return cls(security.autonomy, security.approval_timeout_seconds, admins or {},
                   approvers if approvers is not None else {}, trusted=trusted or {},
                   admins_approve_themselves=security.admins_approve_themselves, store=store)

    def is_admin(self, ctx: Requester) -> bool:
        return is_admin(ctx, self.admins)

    def needs_approval(self, ctx: Requester) -> bool:
        return (self.autonomy == "supervised" and ctx.via_model and ctx.channel not in TRUSTED_CHANNELS
                and not (self.admins_approve_themselves and ctx.identity is None
                         and self.is_admin(ctx)))

    def trusts(self, ctx: Requester, target: str, action: str) -> bool:
        """Whether ``ctx``'s verified identity may act on ``target`` without asking: a trust
        rule covers it, or an *Always* remembered for it."""
        identity = ctx.verified_as
        if identity is None:
            return False
        allowed = self.trusted.get(identity, frozenset())
        if "*" in allowed or target in allowed or (identity, target, action) in self._always:
            return True
        return self.store is not None and self.store.covers(identity, target, action)

    async def check(self, target: str, action: str, summary: str, ctx: Requester) -> str | None:
        """None when ``ctx``'s request may go ahead, else the reason it may not."""
        if self.autonomy == "readonly":  # whoever asks: the model, a chat command, edge-cli
            return ("autonomy is readonly: nothing may actuate pins; set [security] autonomy = "
                    "\"supervised\" or \"full\" to allow it")
        if not self.needs_approval(ctx):
            return None
        if self.trusts(ctx, target, action):
            return None
        identity = ctx.verified_as
        if asks := self._clients.get(ctx):
            return await self._ask_client(asks[-1], target, action, summary, ctx)
        approver = self.approvers.get(ctx.channel)
        if approver is None or not approver.supports_approvals:
            return f"approval needed, but channel {ctx.channel} cannot ask for it"
        token = secrets.token_hex(3)
        future = asyncio.get_running_loop().create_future()
        self._pending[token] = PendingApproval(token, f"{ctx.channel}:{ctx.sender}", future,
                                               identity, summary, ctx.why)
        self._changed()
        try:
            await approver.request_approval(ctx, f"Approve: {summary}?", token)
            decision = await asyncio.wait_for(asyncio.shield(future), self.timeout)
            answered_by = self._pending[token].answered_by
        except TimeoutError:
            log.warning("approval_timeout token=%s by=%s:%s", token, ctx.channel, ctx.sender)
            await approver.approval_expired(ctx, token)  # the prompt says so; its buttons go
            return f"no approval within {self.timeout:g} s (denied)"
        finally:
            self._pending.pop(token, None)
            self._changed()
        log.info("approval_decided token=%s decision=%s by=%s:%s", token, decision.value,
                 ctx.channel, ctx.sender)
        if decision is Decision.DENY:
            return "denied by the user"
        if decision is Decision.ALWAYS and identity is not None:
            await self._remember(identity, target, action, answered_by)
        return None

    async def _remember(self, identity: str, target: str, action: str, admin: str) -> None:
        """*Always*: durable when an admin answered it and there is a store (written in a thread:
        an fsync), else until restart. A store that cannot be written keeps it until restart."""
        if admin and self.store is not None:
            try:
                await asyncio.to_thread(self.store.grant, identity, target, action, admin)
                return
            except OSError as exc:
                log.warning("approval_not_stored identity=%s target=%s error=%r", identity,
                            target, exc)
        self._always.add((identity, target, action))

    @contextlib.contextmanager
    def asking_client(self, ctx: Requester, ask: ClientAsk | None) -> Iterator[None]:
        """While ``ctx``'s call runs, its approvals are asked of the person at its MCP client
        through ``ask`` instead of the chat admins (None: the chat admins, as before)."""
        if ask is None:
            yield
            return
        self._clients.setdefault(ctx, []).append(ask)
        try:
            yield
        finally:
            asks = self._clients[ctx]
            asks.remove(ask)
            if not asks:
                del self._clients[ctx]

    async def _ask_client(self, ask: ClientAsk, target: str, action: str, summary: str,
                          ctx: Requester) -> str | None:
        identity = ctx.verified_as
        log.info("approval_asked at=client by=%s target=%s action=%s", ctx.caller, target, action)
        try:
            answer = await asyncio.wait_for(ask(f"Approve: {summary}?", identity is not None),
                                            self.timeout)
        except TimeoutError:
            log.warning("approval_timeout at=client by=%s", ctx.caller)
            return f"no approval within {self.timeout:g} s (denied)"
        except Exception as exc:  # the client failed to ask: nothing was approved
            log.warning("approval_not_asked at=client by=%s error=%r", ctx.caller, exc)
            return f"the MCP client could not ask its user ({exc}); denied"
        log.info("approval_decided at=client decision=%s by=%s", answer, ctx.caller)
        if answer not in (Decision.APPROVE, Decision.ALWAYS):
            return "declined at the MCP client"
        if answer == Decision.ALWAYS and identity is not None:
            await self._remember(identity, target, action, "")
        return None

    def answer(self, channel: str, token: str, responder: str, decision: str) -> str:
        """Record an answer from ``responder`` on ``channel`` (``approve``, ``deny`` or
        ``always``, any case); returns what to tell them."""
        try:
            decided = Decision(decision.strip().lower())
        except ValueError:
            return "Unknown answer."
        pending = self._pending.get(token.strip().lower())
        if pending is None or pending.future.done():
            return "That approval request has expired or was already answered."
        admin = responder in self.admins.get(channel, frozenset())
        if f"{channel}:{responder}" != pending.requester and not admin:
            log.warning("approval_refused token=%s responder=%s requester=%s",
                        token, responder, pending.requester)
            return "Only the person who asked (or an admin) can answer this request."
        if decided is Decision.ALWAYS and pending.remembered_as is None:
            return ("Always is not offered here: nothing verified who asked (it only named "
                    "itself). Answer approve or deny.")
        pending.answered_by = f"{channel}:{responder}" if admin else ""
        pending.future.set_result(decided)
        return {Decision.APPROVE: "Approved.", Decision.DENY: "Denied.",
                Decision.ALWAYS: "Approved, and remembered."}[decided]

    def _changed(self) -> None:
        for watcher in list(self.watchers):
            watcher()

    def waiting(self) -> list[dict[str, str]]:
        """The approvals waiting now: token, who asked, what, why."""
        return [{"token": p.token, "requester": p.requester, "summary": p.summary, "why": p.why}
                for p in self._pending.values() if not p.future.done()]

    def decide(self, token: str, decision: str, admin: str) -> str:
        """An answer from ``admin``, verified as an admin by the door it came through (a web
        session of the admin role): approve or deny, never *Always* (which is a chat admin's,
        remembered for the identity they know)."""
        pending = self._pending.get(token)
        if pending is None or pending.future.done():
            return "That approval request has expired or was already answered."
        if decision not in (Decision.APPROVE, Decision.DENY):
            return "Answer approve or deny."
        log.info("approval_answered token=%s decision=%s by=%s", token, decision, admin)
        pending.future.set_result(Decision(decision))
        return "Approved." if decision == Decision.APPROVE else "Denied."
