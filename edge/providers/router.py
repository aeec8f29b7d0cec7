"""RouterProvider: ``hint:<name>`` model names and keyword classification of the query pick a
configured provider and model (matching keywords give a hint, the hint names a model route).

>>> rule = ClassificationRule("code", keywords=("python", "script"))
>>> classify("write a Python script", [rule])
'code'
>>> classify("turn on the led", [rule]) is None
True
"""

from __future__ import annotations

import logging
import re
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass

from edge.core.messages import ChatMessage, ToolSpec
from edge.providers.base import ChatResponse, Provider, StreamEvent

log = logging.getLogger(__name__)

HINT_PREFIX = "hint:"


@dataclass(frozen=True)
class ClassificationRule:
    """Keywords match whole words, any case; patterns match as written (case-sensitive)."""

    hint: str
    keywords: tuple[str, ...] = ()
    patterns: tuple[str, ...] = ()
    min_length: int | None = None
    max_length: int | None = None
    priority: int = 0

    def matches(self, text: str) -> bool:
        if self.min_length is not None and len(text) < self.min_length:
            return False
        if self.max_length is not None and len(text) > self.max_length:
            return False
        if not (self.keywords or self.patterns):
            return self.min_length is not None or self.max_length is not None
        lowered = text.lower()
        return (any(re.search(rf"(?<!\w){re.escape(k.lower())}(?!\w)", lowered)
                    for k in self.keywords)
                or any(p in text for p in self.patterns))


def classify(text: str, rules: Sequence[ClassificationRule]) -> str | None:
    """The hint of the highest-priority matching rule (first listed wins a tie)."""
    best: ClassificationRule | None = None
    for rule in rules:
        if rule.matches(text) and (best is None or rule.priority > best.priority):
            best = rule
    return best.hint if best else None


@dataclass(frozen=True)
class Route:
    provider: Provider
    model: str = ""
    """Empty: the provider's own model."""


def last_user_text(messages: Sequence[ChatMessage]) -> str:
    for message in reversed(messages):
        if message.role == "user":
            return message.content
    return ""


class RouterProvider(Provider):
    def __init__(self, default: Provider, routes: dict[str, Route],
                 rules: Sequence[ClassificationRule] = ()):
        self.default = default
        self.routes = routes
        self.rules = list(rules)

    @property
    def name(self) -> str:
        return self.default.name

    @property
    def model(self) -> str:
        return self.default.model

    def resolve(self, model: str | None,
                messages: Sequence[ChatMessage]) -> tuple[Provider, str | None, str]:
        """The provider, the model to ask for (None: its own) and the hint that chose them."""
        hint = ""
        if model and model.startswith(HINT_PREFIX):
            hint = model[len(HINT_PREFIX):]
            if hint not in self.routes:
                log.warning("route_unknown hint=%s known=%s", hint, ",".join(self.routes))
                return self.default, None, ""
        elif model:
            return self.default, model, ""
        else:
            hint = classify(last_user_text(messages), self.rules) or ""
        route = self.routes.get(hint)
        if route is None:
            return self.default, None, ""
        log.info("route hint=%s provider=%s model=%s", hint, route.provider.name,
                 route.model or route.provider.model)
        return route.provider, route.model or None, hint

    async def chat(self, messages: Sequence[ChatMessage], tools: list[ToolSpec] | None = None,
                   *, model: str | None = None) -> ChatResponse:
        provider, chosen, _ = self.resolve(model, messages)
        return await provider.chat(messages, tools, model=chosen)

    async def stream(self, messages: Sequence[ChatMessage], tools: list[ToolSpec] | None = None,
                     *, model: str | None = None) -> AsyncIterator[StreamEvent]:
        provider, chosen, _ = self.resolve(model, messages)
        async for event in provider.stream(messages, tools, model=chosen):
            yield event

    async def aclose(self) -> None:
        seen: set[int] = set()
        for provider in [self.default, *(r.provider for r in self.routes.values())]:
            if id(provider) not in seen:
                seen.add(id(provider))
                await provider.aclose()
