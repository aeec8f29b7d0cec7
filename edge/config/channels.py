"""The ``[channels.NAME]`` sections: one model per chat channel, gathered by
:class:`ChannelsConfig`.

Each section says whether its channel runs (``enabled``) and who may talk to it (``access``);
the channel's spec (:mod:`edge.channels.registry`) finds its section here and reads the rest
(its pairing key, its admins). The config sits on a floor below the channels and cannot import
them: a new channel with settings adds its section model here and a field on
:class:`ChannelsConfig` (``tests/channels/test_registry.py`` keeps fields and specs in step).

>>> ChannelsConfig.model_validate({"telegram": {"allowed_users": [42]}}).telegram.allowed_users
['42']
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BeforeValidator, Field, SecretStr

from edge.config.section import Seconds, Section


def _as_text(value: object) -> object:
    """An id written as a TOML integer (``allowed_users = [123456789]``) is the same id as text;
    anything else (a float, a table) is left for the validator to refuse."""
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


UserId = Annotated[str, BeforeValidator(_as_text)]
"""A Telegram user id or Signal number: text, or a TOML integer taken as text."""


class ChannelAccessConfig(Section):
    """Who may talk to the agent on a channel (empty list = nobody, "*" = everyone)."""

    allowed_users: list[str] = []
    require_mention_in_groups: bool = True
    rate_limit_per_minute: int = Field(default=20, ge=1)

    def access(self) -> tuple[list[str], bool, int]:
        """(allowed senders, mention required in groups, messages per minute per sender)."""
        return self.allowed_users, self.require_mention_in_groups, self.rate_limit_per_minute


class CliChannelConfig(ChannelAccessConfig):
    enabled: bool = True
    allowed_users: list[str] = ["*"]
    receipts: bool | None = None
    """End replies that touched a pin with the agent's receipt here; unset: ``[agent] receipts``."""


class TelegramGroupsConfig(Section):
    require_mention: bool = True


class TelegramChannelConfig(Section):
    """Telegram Bot API long polling; enabled when bot_token is set."""

    bot_token: SecretStr | None = None
    allowed_users: list[UserId] = []
    """Numeric Telegram user ids; empty = nobody (pair with `edge-cli channel pair telegram`)."""
    admins: list[UserId] = []
    """User ids who may answer anyone's approval requests."""
    api_base: str = "https://api.telegram.org"
    groups: TelegramGroupsConfig = TelegramGroupsConfig()
    poll_timeout_seconds: int = Field(default=30, ge=1, le=50)
    rate_limit_per_minute: int = Field(default=20, ge=1)
    stream_drafts: bool = True
    draft_interval_seconds: Seconds = Field(default=1.0, ge=0.2)
    receipts: bool | None = None
    """End replies that touched a pin with the agent's receipt here; unset: ``[agent] receipts``."""

    @property
    def enabled(self) -> bool:
        return self.bot_token is not None and bool(self.bot_token.get_secret_value())

    def access(self) -> tuple[list[str], bool, int]:
        return self.allowed_users, self.groups.require_mention, self.rate_limit_per_minute


class SignalChannelConfig(Section):
    """A signal-cli daemon in HTTP mode (`signal-cli -a ACCOUNT daemon --http 127.0.0.1:8080`)."""

    http_url: str = ""
    account: str = ""
    allowed_numbers: list[UserId] = []
    """Phone numbers (+4915...) or UUIDs; empty = nobody."""
    admins: list[UserId] = []
    group_ids: list[str] = []
    """Groups the agent listens in; messages from other groups are ignored."""
    require_mention_in_groups: bool = True
    rate_limit_per_minute: int = Field(default=20, ge=1)
    receipts: bool | None = None
    """End replies that touched a pin with the agent's receipt here; unset: ``[agent] receipts``."""

    @property
    def enabled(self) -> bool:
        return bool(self.http_url and self.account)

    def access(self) -> tuple[list[str], bool, int]:
        return self.allowed_numbers, self.require_mention_in_groups, self.rate_limit_per_minute


class ChannelsConfig(Section):
    cli: CliChannelConfig = CliChannelConfig()
    telegram: TelegramChannelConfig = TelegramChannelConfig()
    signal: SignalChannelConfig = SignalChannelConfig()
