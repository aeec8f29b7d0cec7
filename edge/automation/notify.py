"""Notices from rules, schedules and the heartbeat to people, over the running channels.

Targets: ``admins`` (every channel's configured admins, and the local terminal when the agent
runs in one), ``telegram`` / ``signal`` (that channel's admins), ``telegram:ID``,
``signal:+NUMBER``. A Telegram admin's user id is also their private chat with the bot.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping

from edge.channels.base import Channel, SendMessage

log = logging.getLogger(__name__)

LOCAL = "cli"
"""The terminal the agent runs in: the operator, who counts as an admin."""


class ChannelNotifier:
    def __init__(self, channels: Mapping[str, Channel], admins: Mapping[str, frozenset[str]]):
        self.channels = channels
        self.admins = admins

    def recipients(self, targets: Iterable[str]) -> list[tuple[str, str]]:
        """(channel, recipient) pairs for ``targets``, each once, on running channels only."""
        found: list[tuple[str, str]] = []
        for target in targets:
            channel, _, who = target.partition(":")
            if target == "admins":
                names = list(self.channels)
            elif channel in self.channels:
                names = [channel]
            else:
                log.warning("notify_channel_not_running target=%s", target)
                continue
            for name in names:
                if who:
                    pairs = [(name, who)]
                elif name == LOCAL:
                    pairs = [(name, "local")]
                else:
                    pairs = [(name, admin) for admin in sorted(self.admins.get(name, ()))]
                found.extend(p for p in pairs if p not in found)
        return found

    async def notify(self, targets: Iterable[str], text: str) -> int:
        """Send ``text``; returns how many recipients got it (failures are logged)."""
        sent = 0
        for channel, recipient in self.recipients(targets):
            try:
                await self.channels[channel].send(SendMessage(text, recipient))
                sent += 1
            except Exception as exc:  # one unreachable recipient must not stop the others
                log.error("notify_failed channel=%s recipient=%s error=%r", channel, recipient,
                          str(exc))
        if sent:
            log.info("notified recipients=%d text=%r", sent, text[:80])
        return sent
