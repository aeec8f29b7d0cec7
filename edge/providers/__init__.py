"""LLM providers behind the Provider protocol; channels and providers never import each other.

The face is lazy (PEP 562): the names in ``__all__`` load from their modules when first used, so
importing any module of the package (which runs this file first) loads none of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from edge.core.faces import lazy_face

if TYPE_CHECKING:
    from edge.providers.base import (
        ChatResponse,
        Provider,
        ProviderError,
        StreamDone,
        StreamEvent,
        StreamInterrupted,
        TextDelta,
        ToolCallReady,
        Usage,
        collect,
        mentions_context_overflow,
    )
    from edge.providers.factory import create_provider, describe_models, describe_routes
    from edge.providers.switch import ModelInfo, ModelSwitch

__all__ = ["ChatResponse", "ModelInfo", "ModelSwitch", "Provider", "ProviderError", "StreamDone",
           "StreamEvent", "StreamInterrupted", "TextDelta", "ToolCallReady", "Usage", "collect",
           "create_provider", "describe_models", "describe_routes", "mentions_context_overflow"]

_HOMES = {
    "base": ("ChatResponse", "Provider", "ProviderError", "StreamDone", "StreamEvent",
             "StreamInterrupted", "TextDelta", "ToolCallReady", "Usage", "collect",
             "mentions_context_overflow"),
    "factory": ("create_provider", "describe_models", "describe_routes"),
    "switch": ("ModelInfo", "ModelSwitch"),
}
"""Each module, and the names of ``__all__`` it holds."""

__getattr__ = lazy_face(__name__, _HOMES)
