"""Channels carry messages between people and the agent, behind the Channel protocol.

A channel is one module (its :class:`Channel` subclass) and one :class:`ChannelSpec` registered in
:mod:`edge.channels.registry`, which the runtime, the pairing, the admin table and the doctor read.

The face is lazy (PEP 562): the names in ``__all__`` load from their modules when first used, so
importing any module of the package (which runs this file first) loads none of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from edge.core.faces import lazy_face

if TYPE_CHECKING:
    from edge.channels.base import Channel, ChannelCapabilityMissing, ChannelMessage, SendMessage
    from edge.channels.cli import CliChannel
    from edge.channels.mqtt import MqttChatChannel
    from edge.channels.outbox import Outbox
    from edge.channels.pairing import PairingCodes
    from edge.channels.registry import (
        CHANNELS,
        admin_table,
        channel_spec,
        enabled_channels,
        pairable,
        register,
    )
    from edge.channels.signal import SignalChannel, SignalRPCError
    from edge.channels.spec import ApprovalAnswers, ChannelContext, ChannelSpec, ServiceCheck
    from edge.channels.supervisor import ListenerStalled, ListenerSupervisor
    from edge.channels.telegram import TelegramChannel
    from edge.channels.telegram_api import TelegramAPI, TelegramError, TelegramNetworkError

__all__ = ["ApprovalAnswers", "CHANNELS", "Channel", "ChannelCapabilityMissing", "ChannelContext",
           "ChannelMessage", "ChannelSpec", "CliChannel", "ListenerStalled", "ListenerSupervisor",
           "MqttChatChannel", "Outbox", "PairingCodes", "SendMessage", "ServiceCheck",
           "SignalChannel", "SignalRPCError", "TelegramAPI", "TelegramChannel", "TelegramError",
           "TelegramNetworkError", "admin_table", "channel_spec", "enabled_channels", "pairable",
           "register"]

_HOMES = {
    "base": ("Channel", "ChannelCapabilityMissing", "ChannelMessage", "SendMessage"),
    "cli": ("CliChannel",),
    "mqtt": ("MqttChatChannel",),
    "outbox": ("Outbox",),
    "pairing": ("PairingCodes",),
    "registry": ("CHANNELS", "admin_table", "channel_spec", "enabled_channels", "pairable",
                 "register"),
    "signal": ("SignalChannel", "SignalRPCError"),
    "spec": ("ApprovalAnswers", "ChannelContext", "ChannelSpec", "ServiceCheck"),
    "supervisor": ("ListenerStalled", "ListenerSupervisor"),
    "telegram": ("TelegramChannel",),
    "telegram_api": ("TelegramAPI", "TelegramError", "TelegramNetworkError"),
}
"""Each module, and the names of ``__all__`` it holds."""

__getattr__ = lazy_face(__name__, _HOMES)
