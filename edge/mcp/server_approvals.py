"""An MCP client's actuation under ``supervised`` autonomy: approved by an admin on the chat
channels, as the model's are by the person who asked.

The approval gate (:class:`edge.security.approvals.ApprovalGate`) asks through the requester's
own channel. An MCP client has no chat of its own, so the channel ``mcp`` is an
:class:`AdminRelay`: it sends the prompt to every admin of every channel that can ask (Telegram
buttons, Signal token replies), and the first admin's answer decides (the gate takes an answer from
an admin of the channel it arrives on). With no admin on any such channel the relay cannot ask, and
the gate refuses the actuation saying so. *Always* is offered only for an MCP caller something
verified (its token, or the local uid running ``edge-cli mcp``), and remembered for that.

>>> relay = AdminRelay({}, {})
>>> relay.supports_approvals
False
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

from edge.core.requester import Requester

if TYPE_CHECKING:
    from edge.channels.base import Channel
    from edge.security.approvals import Approver

log = logging.getLogger(__name__)


class AdminRelay:
    """The approver of the ``mcp`` channel: the admins on the chat channels."""

    def __init__(self, admins: Mapping[str, frozenset[str]], channels: Mapping[str, Channel]):
        self.admins = admins
        self.channels = channels
        """The runtime's running channels, filled as they start."""

    def _asked(self) -> Iterator[tuple[Channel, Requester]]:
        """Each channel that can ask, with each of its admins as whom to ask."""
        for name, channel in self.channels.items():
            if channel.supports_approvals:
                for admin in sorted(self.admins.get(name, frozenset())):
                    yield channel, Requester(name, admin, reply_target=admin)

    @property
    def supports_approvals(self) -> bool:
        """Whether any running channel can ask one of its admins (worked out, never set)."""
        return next(self._asked(), None) is not None

    @supports_approvals.setter
    def supports_approvals(self, value: bool) -> None:  # the Approver protocol's attribute
        raise AttributeError("AdminRelay.supports_approvals follows the channels and their admins")

    async def request_approval(self, ctx: Requester, prompt: str, token: str) -> None:
        """Ask every admin; raises the last failure when none could be asked. *Always* is
        offered only for a caller something verified (a token, a local uid)."""
        asked, failure = 0, None
        verified = ctx.verified_as is not None
        who = f"{ctx.caller}, {ctx.why}" + ("" if verified else "; it only named itself")
        for channel, admin in self._asked():
            try:
                await channel.request_approval(admin, f"{prompt} (asked over MCP by {who})",
                                               token, always=verified)
                asked += 1
            except Exception as exc:  # another admin may still be reachable
                log.warning("mcp_approval_not_sent channel=%s admin=%s error=%r", admin.channel,
                            admin.sender, exc)
                failure = exc
        if not asked and failure is not None:
            raise failure
        log.info("mcp_approval_asked token=%s by=%s admins=%d", token, ctx.caller, asked)

    async def approval_expired(self, ctx: Requester, token: str) -> None:
        for channel, admin in self._asked():
            try:
                await channel.approval_expired(admin, token)
            except Exception as exc:  # the gate has already denied it; the prompt only lingers
                log.warning("mcp_approval_expiry_not_shown channel=%s error=%r", admin.channel, exc)


class Approvers(Mapping[str, "Approver"]):
    """The gate's approvers: the running channels, and ``relayed`` ones (``mcp``) that ask
    through them. A live view: channels that start later are seen."""

    def __init__(self, channels: Mapping[str, Channel], relayed: Mapping[str, Approver]):
        self.channels = channels
        self.relayed = relayed

    def __getitem__(self, name: str) -> Approver:
        if name in self.channels:
            return self.channels[name]
        return self.relayed[name]

    def __iter__(self) -> Iterator[str]:
        yield from self.channels
        yield from (name for name in self.relayed if name not in self.channels)

    def __len__(self) -> int:
        return len(set(self.channels) | set(self.relayed))


def approvers_with_mcp(admins: Mapping[str, frozenset[str]],
                       channels: Mapping[str, Channel]) -> Approvers:
    """The running ``channels``, and ``mcp`` asking their admins."""
    return Approvers(channels, {"mcp": AdminRelay(admins, channels)})
