"""Every chat channel the agent knows, by name: one :class:`~edge.channels.spec.ChannelSpec`
each, registered once below. The runtime starts the enabled ones in this order; the pairing, the
admin table, the automation's notice targets, ``edge-cli channel pair`` and ``edge-cli doctor``
read them from here.

Each built-in channel is built on first use: its module (httpx, the Bot API's update models)
loads only in an agent that runs it.

>>> pairable()
['telegram', 'signal']
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from edge.channels.probes import check_signal, check_telegram
from edge.channels.spec import ChannelContext, ChannelSpec

if TYPE_CHECKING:
    from edge.channels.base import Channel
    from edge.config.channels import CliChannelConfig, SignalChannelConfig, TelegramChannelConfig
    from edge.config.model import Config
    from edge.config.mqtt import MqttConfig
    from edge.config.web import WebConfig

CHANNELS: dict[str, ChannelSpec[Any]] = {}
WILDCARD = "*"
"""An allowlist of ``*``: anyone."""


def register(spec: ChannelSpec[Any]) -> ChannelSpec[Any]:
    """Add a channel; its name must be new (it is its config key and its callers' prefix)."""
    if spec.name in CHANNELS:
        raise ValueError(f"a channel named {spec.name!r} is registered already")
    CHANNELS[spec.name] = spec
    return spec


def channel_spec(name: str) -> ChannelSpec[Any]:
    """The spec of channel ``name``; KeyError for a name nobody registered."""
    return CHANNELS[name]


def pairable() -> list[str]:
    """Channels people pair with (``edge-cli channel pair NAME``)."""
    return [spec.name for spec in CHANNELS.values() if spec.pairs_into]


def enabled_channels(config: Config) -> list[str]:
    """The channels ``config`` enables, in start-up order."""
    return [spec.name for spec in CHANNELS.values() if spec.section(config).enabled]


def admin_table(config: Config) -> dict[str, frozenset[str]]:
    """Channel -> its configured admins, for every channel that has admins (enabled or not):
    who may answer anyone's approval, switch the model and see the full status."""
    return {spec.name: frozenset(map(str, spec.admins(spec.section(config))))
            for spec in CHANNELS.values() if spec.admins is not None}


# the channels that come with the agent --------------------------------------------------------

def _build_cli(section: CliChannelConfig, context: ChannelContext) -> Channel | None:
    from edge.channels.cli import CliChannel, stdin_attached

    stdin = context.stdin or sys.stdin
    if not stdin_attached(stdin):
        return None  # /dev/null (systemd's default): nobody to talk to
    return CliChannel(stdin, context.stdout)


def _build_telegram(section: TelegramChannelConfig, context: ChannelContext) -> Channel:
    from edge.channels.outbox import Outbox
    from edge.channels.telegram import TelegramChannel
    from edge.channels.telegram_api import TelegramAPI

    token = section.bot_token.get_secret_value() if section.bot_token else ""
    return TelegramChannel(
        TelegramAPI(token, section.api_base), context.allowed, context.state_dir,
        poll_timeout=section.poll_timeout_seconds, require_mention=section.groups.require_mention,
        approvals=context.approvals, pair=context.pair, commands=context.commands(),
        draft_interval=section.draft_interval_seconds, stream_drafts=section.stream_drafts,
        outbox=Outbox.from_config(context.config.agent, context.state_dir))


def _build_signal(section: SignalChannelConfig, context: ChannelContext) -> Channel:
    from edge.channels.outbox import Outbox
    from edge.channels.signal import SignalChannel

    return SignalChannel(section.http_url, section.account, context.allowed,
                         group_ids=section.group_ids, approvals=context.approvals,
                         pair=context.pair,
                         outbox=Outbox.from_config(context.config.agent, context.state_dir))


def _build_mqtt(section: MqttChat, context: ChannelContext) -> Channel | None:
    from edge.channels.mqtt import MqttChatChannel

    if context.mqtt is None or context.mqtt.chat_inbox is None:
        return None
    return MqttChatChannel(context.mqtt)  # the broker's ACL says who may publish


class MqttChat:
    """``[mqtt] chat`` as a channel's section: it runs when the bridge takes prompts (chat and
    allow_commands), for whoever the broker lets publish, at ``chat_rate_limit_per_minute``."""

    def __init__(self, mqtt: MqttConfig):
        self.mqtt = mqtt

    @property
    def enabled(self) -> bool:
        return self.mqtt.enabled and self.mqtt.chat and self.mqtt.allow_commands

    def access(self) -> tuple[list[str], bool, int]:
        return ["*"], False, self.mqtt.chat_rate_limit_per_minute


def _build_web(section: WebChat, context: ChannelContext) -> Channel | None:
    from edge.channels.web import WebChatChannel

    return None if context.web is None else WebChatChannel(context.web)


class WebChat:
    """The web page's chat as a channel's section: it runs when the page does (``[web]
    listen``, ``chat``), for every paired browser (the page's server verified its session), at
    ``chat_rate_limit_per_minute``."""

    def __init__(self, web: WebConfig):
        self.web = web

    @property
    def enabled(self) -> bool:
        return self.web.enabled and self.web.chat

    def access(self) -> tuple[list[str], bool, int]:
        return ["*"], False, self.web.chat_rate_limit_per_minute


def open_to_anyone(channel: str, key: str, allowed: Iterable[str], who: str, listed: str) -> str | None:
    """The warning for an allowlist of ``*`` (None when it lists people).

    >>> open_to_anyone("telegram", "allowed_users", ["*"], "anyone on Telegram", "user ids")[:40]
    'channels.telegram.allowed_users = ["*"]:'
    """
    if WILDCARD not in allowed:
        return None
    return (f'channels.{channel}.{key} = ["*"]: {who} who finds the bot can talk to the agent and '
            f"drive its pins; list {listed} instead (or pair them: `edge-cli channel pair {channel}`)")


register(ChannelSpec("cli", lambda config: config.channels.cli, _build_cli,
                     receipts=lambda section: section.receipts))
register(ChannelSpec("telegram", lambda config: config.channels.telegram, _build_telegram,
                     pairs_into="allowed_users", admins=lambda section: section.admins,
                     check=check_telegram, receipts=lambda section: section.receipts,
                     exposure=lambda section: open_to_anyone(
                         "telegram", "allowed_users", section.allowed_users, "anyone on Telegram",
                         "user ids")))
register(ChannelSpec("signal", lambda config: config.channels.signal, _build_signal,
                     pairs_into="allowed_numbers", admins=lambda section: section.admins,
                     check=check_signal, receipts=lambda section: section.receipts,
                     exposure=lambda section: open_to_anyone(
                         "signal", "allowed_numbers", section.allowed_numbers, "anyone on Signal",
                         "numbers")))
register(ChannelSpec("mqtt", lambda config: MqttChat(config.mqtt), _build_mqtt,
                     receipts=lambda section: section.mqtt.chat_receipts))
register(ChannelSpec("web", lambda config: WebChat(config.web), _build_web))
