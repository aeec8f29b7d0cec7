"""ModelSwitch: the provider the agent holds, switchable at run time without a restart
(``/models openrouter`` switches provider, ``/model NAME`` switches model). It owns one wire
provider per configured endpoint and rebuilds the light decorators on a
switch: a RouterProvider over a ReliableProvider chain whose head is the selected endpoint.

    switch.list_models()          # ModelInfo rows, one per endpoint, ``active`` marked
    switch.select("groq")         # an endpoint's name switches endpoint (its configured model)
    switch.select("qwen2.5:3b")   # anything else is a model for the active endpoint
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from edge.core.messages import ChatMessage, ToolSpec
from edge.providers.base import ChatResponse, Provider, StreamEvent
from edge.providers.reliable import ChainEntry, ReliableProvider, RetryPolicy
from edge.providers.router import ClassificationRule, Route, RouterProvider

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ModelInfo:
    name: str
    kind: str
    model: str
    base_url: str
    role: str
    fallback_models: list[str]
    active: bool = False

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Endpoint:
    name: str
    provider: Provider
    model: str
    fallback_models: list[str]
    info: dict[str, Any]
    """The endpoint's row of :func:`~edge.providers.factory.describe_models`."""


class ModelSwitch(Provider):
    """The provider the runtime holds: chats through the active endpoint's stack, and switches
    endpoint or model on :meth:`select` (``/model``, ``/models``, ``edge-cli models use``).
    Built from config by :func:`edge.providers.factory.create_provider`."""

    def __init__(self, endpoints: list[Endpoint],
                 policy: RetryPolicy = RetryPolicy(),  # noqa: B008 - a frozen dataclass, shared safely
                 routes: Mapping[str, tuple[str, str]] | None = None,
                 rules: Sequence[ClassificationRule] = ()):
        if not endpoints:
            raise ValueError("ModelSwitch needs at least one endpoint")
        self.endpoints = {e.name: e for e in endpoints}
        self.policy = policy
        self.route_targets = dict(routes or {})
        """hint -> (endpoint name, model or "")."""
        self.rules = list(rules)
        self.active = endpoints[0].name
        self.active_model = endpoints[0].model
        self._stack = self._build()

    def _chain(self, head: str, model: str) -> ReliableProvider:
        first = self.endpoints[head]
        entries = [ChainEntry(first.provider, model, first.fallback_models)]
        entries += [ChainEntry(e.provider, e.model, e.fallback_models)
                    for name, e in self.endpoints.items() if name != head]
        return ReliableProvider(entries, self.policy)

    def _build(self) -> RouterProvider:
        routes = {hint: Route(self._chain(name, model or self.endpoints[name].model))
                  for hint, (name, model) in self.route_targets.items()}
        return RouterProvider(self._chain(self.active, self.active_model), routes, self.rules)

    @property
    def name(self) -> str:
        return self.active

    @property
    def model(self) -> str:
        return self.active_model

    @model.setter
    def model(self, name: str) -> None:
        """``switch.model = "x"`` asks the active endpoint for model x (as ``/model x`` does)."""
        self.select_model(name)

    @property
    def compact_profile(self) -> bool:
        """The active endpoint's ``compact_profile`` (set, or implied by where it points)."""
        return bool(self.endpoints[self.active].info.get("compact", False))

    def available_models(self) -> list[str]:
        """Every model name the config mentions, active endpoint's first (for ``/models``)."""
        names = [self.active_model]
        for endpoint in self.endpoints.values():
            names += [endpoint.model, *endpoint.fallback_models]
        names += [model for _, model in self.route_targets.values() if model]
        return list(dict.fromkeys(names))

    def list_models(self) -> list[ModelInfo]:
        rows = []
        for name, endpoint in self.endpoints.items():
            active = name == self.active
            rows.append(ModelInfo(name, endpoint.info["kind"],
                                  self.active_model if active else endpoint.model,
                                  endpoint.info["base_url"], endpoint.info["role"],
                                  list(endpoint.fallback_models), active))
        return rows

    def list_routes(self) -> list[dict[str, str]]:
        return [{"hint": hint, "endpoint": name, "model": model}
                for hint, (name, model) in self.route_targets.items()]

    def select(self, name: str) -> ModelInfo:
        """Switch to the endpoint called ``name``, else to model ``name`` on the active one."""
        name = name.strip()
        if not name:
            raise ValueError("name an endpoint or a model; /models lists them")
        if name in self.endpoints:
            self.active, self.active_model = name, self.endpoints[name].model
            return self._switched()
        return self.select_model(name)

    def select_model(self, model: str, endpoint: str | None = None) -> ModelInfo:
        """Ask ``endpoint`` (default: the active one) for ``model`` from now on."""
        if not model.strip():
            raise ValueError("name a model; /models lists them")
        if endpoint is not None and endpoint not in self.endpoints:
            raise ValueError(f"no endpoint {endpoint!r}; known: {', '.join(self.endpoints)}")
        self.active = endpoint or self.active
        self.active_model = model.strip()
        return self._switched()

    def _switched(self) -> ModelInfo:
        self._stack = self._build()
        log.info("model_switched endpoint=%s model=%s", self.active, self.active_model)
        return next(row for row in self.list_models() if row.active)

    async def chat(self, messages: Sequence[ChatMessage], tools: list[ToolSpec] | None = None,
                   *, model: str | None = None) -> ChatResponse:
        return await self._stack.chat(messages, tools, model=model)

    async def stream(self, messages: Sequence[ChatMessage], tools: list[ToolSpec] | None = None,
                     *, model: str | None = None) -> AsyncIterator[StreamEvent]:
        async for event in self._stack.stream(messages, tools, model=model):
            yield event

    async def aclose(self) -> None:
        for endpoint in self.endpoints.values():
            await endpoint.provider.aclose()
