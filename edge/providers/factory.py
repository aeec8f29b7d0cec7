"""Build the configured provider; adding a wire format touches its module and one line here."""

from __future__ import annotations

from edge.config.model import ProviderConfig
from edge.providers.base import Provider


def create_provider(config: ProviderConfig) -> Provider | None:
    """The provider, or None when ``[provider]`` has no base_url and model."""
    if not config.configured:
        return None
    from edge.providers.openai import OpenAICompatibleProvider

    key = config.api_key.get_secret_value() if config.api_key else None
    return OpenAICompatibleProvider(config.base_url, config.model, key,
                                    temperature=config.temperature, timeout=config.timeout_seconds)
