"""Build the configured providers: a wire provider per endpoint, the failover chain over them and
the router over that. Adding a wire format touches its module and
one line in :func:`create_endpoint`. Light at import: wire modules (and httpx) load on use.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from edge.config.model import EndpointConfig, ProviderConfig
from edge.config.presets import DEFAULT_KEY_VARIABLE, PRESETS
from edge.providers.keys import KeyRing, resolve_api_keys

if TYPE_CHECKING:  # the wire modules import httpx: they load when an endpoint is built
    from edge.providers.endpoint import ToolMode, WireProvider
    from edge.providers.prompt_guided import ToolSupportMemory
    from edge.providers.switch import ModelSwitch


def endpoint_keys(config: EndpointConfig, env: Mapping[str, str] = os.environ) -> KeyRing:
    explicit = [config.api_key, *config.api_keys]
    preset = PRESETS.get(config.preset)
    variable = preset.key_variable if preset else DEFAULT_KEY_VARIABLE[config.resolved_kind]
    return KeyRing(resolve_api_keys([k.get_secret_value() for k in explicit if k], variable, env))


def endpoint_base_url(config: EndpointConfig) -> str:
    preset = PRESETS.get(config.preset)
    return config.base_url or (preset.base_url if preset else "")


def create_endpoint(config: EndpointConfig, *, tool_memory: ToolSupportMemory | None = None,
                    env: Mapping[str, str] = os.environ) -> WireProvider:
    """One wire-format provider for one ``[provider]`` or ``[[provider.fallbacks]]`` table."""
    kind = config.resolved_kind
    common: dict[str, Any] = dict(keys=endpoint_keys(config, env), temperature=config.temperature,
                  max_tokens=config.max_tokens, timeout=config.timeout_seconds,
                  name=config.display_name, tool_memory=tool_memory)
    base_url = endpoint_base_url(config)
    if kind == "anthropic":
        from edge.providers.anthropic import DEFAULT_BASE_URL, AnthropicProvider

        return AnthropicProvider(config.model, base_url=base_url or DEFAULT_BASE_URL,
                                 tool_mode=_native_unless_prompt(config), **common)
    if kind == "gemini":
        from edge.providers.gemini import DEFAULT_BASE_URL, GeminiProvider

        return GeminiProvider(config.model, base_url=base_url or DEFAULT_BASE_URL,
                              tool_mode=_native_unless_prompt(config), **common)
    from edge.providers.openai import OpenAICompatibleProvider

    preset = PRESETS.get(config.preset)
    auth_style = config.auth_style or (preset.auth_style if preset else "bearer")
    return OpenAICompatibleProvider(base_url, config.model, auth_style=auth_style,
                                    auth_header=config.auth_header or None,
                                    tool_mode=config.tool_mode,
                                    constrain_calls=config.preset == "llamacpp", **common)


def _native_unless_prompt(config: EndpointConfig) -> ToolMode:
    """Anthropic and Gemini always take tools natively; only an explicit "prompt" changes that."""
    return "prompt" if config.tool_mode == "prompt" else "native"


def endpoint_configs(config: ProviderConfig) -> list[EndpointConfig]:
    """The primary endpoint, then the fallbacks, in chain order."""
    return [config, *config.fallbacks]


def describe_models(config: ProviderConfig) -> list[dict[str, Any]]:
    """What ``edge-cli models`` and ``/models`` list, from config alone (no network)."""
    rows = []
    for index, endpoint in enumerate(endpoint_configs(config) if config.configured else []):
        rows.append({"name": endpoint.display_name, "kind": endpoint.resolved_kind,
                     "model": endpoint.model, "fallback_models": list(endpoint.fallback_models),
                     "base_url": endpoint_base_url(endpoint),
                     "role": "primary" if index == 0 else "fallback",
                     "compact": endpoint.compact})
    return rows


def describe_routes(config: ProviderConfig) -> list[dict[str, Any]]:
    return [{"hint": hint, "endpoint": route.endpoint or config.display_name,
             "model": route.model, "keywords": list(route.keywords)}
            for hint, route in config.routes.items()]


def create_provider(config: ProviderConfig,
                    env: Mapping[str, str] = os.environ) -> ModelSwitch | None:
    """The configured provider stack as a switchable :class:`~edge.providers.switch.ModelSwitch`
    (routes over a failover chain over wire providers), or None when no model is configured."""
    if not config.configured:
        return None
    # the provider stack loads only when a model is configured (idle memory of an agent without one)
    from edge.providers.prompt_guided import ToolSupportMemory
    from edge.providers.reliable import RetryPolicy
    from edge.providers.router import ClassificationRule
    from edge.providers.switch import Endpoint, ModelSwitch

    memory = ToolSupportMemory()
    endpoints = [Endpoint(c.display_name, create_endpoint(c, tool_memory=memory, env=env),
                          c.model, list(c.fallback_models), row)
                 for c, row in zip(endpoint_configs(config), describe_models(config), strict=True)]
    policy = RetryPolicy(config.max_retries, config.backoff_seconds, config.backoff_max_seconds,
                         config.max_retry_after_seconds, config.cooldown_seconds)
    routes = {hint: (r.endpoint or config.display_name, r.model)
              for hint, r in config.routes.items()}
    rules = [ClassificationRule(hint, tuple(r.keywords), tuple(r.patterns), r.min_length,
                                r.max_length, r.priority)
             for hint, r in config.routes.items()]
    return ModelSwitch(endpoints, policy, routes, rules)
