"""ReliableProvider: retries, key rotation, model fallbacks and a failover chain, as a decorator.

For each provider in the chain, for its model then each fallback model: retry 429, 5xx, timeouts
and connection errors with exponential backoff and jitter, waiting ``Retry-After`` when the server
says so (a wait longer than ``max_retry_after`` moves on instead); rotate the API key on 429; never
retry other 4xx. A provider that fails through all of that sits out ``cooldown`` seconds while the
rest of the chain answers, then is tried first again.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from edge.core.messages import ChatMessage, ToolSpec
from edge.providers.base import ChatResponse, Provider, ProviderError, StreamEvent

log = logging.getLogger(__name__)

T = TypeVar("T")


@dataclass
class ChainEntry:
    provider: Provider
    model: str = ""
    """The model to ask for; empty means the provider's own."""
    fallback_models: list[str] = field(default_factory=list)

    @property
    def models(self) -> list[str]:
        return list(dict.fromkeys([self.model or self.provider.model, *self.fallback_models]))


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 2
    backoff_seconds: float = 0.5
    backoff_max_seconds: float = 10.0
    max_retry_after_seconds: float = 30.0
    cooldown_seconds: float = 30.0


class ReliableProvider(Provider):
    def __init__(self, chain: Sequence[ChainEntry | Provider], policy: RetryPolicy = RetryPolicy(),
                 *, sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
                 clock: Callable[[], float] = time.monotonic,
                 jitter: Callable[[], float] = random.random):
        if not chain:
            raise ValueError("ReliableProvider needs at least one provider")
        self.chain = [e if isinstance(e, ChainEntry) else ChainEntry(e) for e in chain]
        self.policy = policy
        self._sleep, self._clock, self._jitter = sleep, clock, jitter
        self._resting_until: dict[int, float] = {}

    @property
    def name(self) -> str:
        return self.chain[0].provider.name

    @property
    def model(self) -> str:
        return self.chain[0].models[0]

    def order(self) -> list[int]:
        """Chain positions to try now: rested providers in order, then those cooling down."""
        now = self._clock()
        ready = [i for i in range(len(self.chain)) if self._resting_until.get(i, 0.0) <= now]
        resting = sorted((i for i in range(len(self.chain)) if i not in ready),
                         key=lambda i: self._resting_until[i])
        return ready + resting

    def backoff(self, attempt: int) -> float:
        base = min(self.policy.backoff_max_seconds, self.policy.backoff_seconds * 2.0 ** attempt)
        return base * (0.5 + self._jitter() / 2)

    def _delay(self, error: ProviderError, attempt: int, entry: ChainEntry) -> float | None:
        """Seconds to wait before the next attempt, or None to give up on this model."""
        if not error.retryable or attempt >= self.policy.max_retries:
            return None
        if error.status == 429 and entry.provider.rotate_key():
            log.info("provider_key_rotated provider=%s", entry.provider.name)
            return 0.0
        if error.retry_after is not None:
            if error.retry_after > self.policy.max_retry_after_seconds:
                return None
            return error.retry_after
        return self.backoff(attempt)

    def _models(self, position: int, model: str | None) -> list[str]:
        entry = self.chain[position]
        if model and position == 0:
            return list(dict.fromkeys([model, *entry.fallback_models]))
        return entry.models

    def _failed(self, position: int) -> None:
        self._resting_until[position] = self._clock() + self.policy.cooldown_seconds

    def _exhausted(self, failures: list[str]) -> ProviderError:
        return ProviderError("every configured model failed: " + "; ".join(failures[-4:]),
                             retryable=True)

    async def chat(self, messages: Sequence[ChatMessage], tools: list[ToolSpec] | None = None,
                   *, model: str | None = None) -> ChatResponse:
        async def ask(provider: Provider, step_model: str) -> AsyncIterator[ChatResponse]:
            response = await provider.chat(messages, tools, model=step_model)
            response.model = response.model or step_model
            yield response

        # drained, not left at its one item: the loop marks the provider rested after it
        [response] = [response async for response in self._failover(ask, model)]
        return response

    async def stream(self, messages: Sequence[ChatMessage], tools: list[ToolSpec] | None = None,
                     *, model: str | None = None) -> AsyncIterator[StreamEvent]:
        """Retries and failover happen only before the first event: once text has been shown,
        a failure is raised (a :class:`StreamInterrupted` carries the partial text)."""
        def ask(provider: Provider, step_model: str) -> AsyncIterator[StreamEvent]:
            return provider.stream(messages, tools, model=step_model)

        async for event in self._failover(ask, model):
            yield event

    async def _failover(self, ask: Callable[[Provider, str], AsyncIterator[T]],
                        model: str | None) -> AsyncIterator[T]:
        """The one retry loop: what ``ask(provider, model)`` yields, from the first attempt that
        succeeds along the chain, its models and their retries.

        An attempt that fails before yielding anything is retried, falls back or fails over; one
        that fails after yielding has been seen by the caller, so its endpoint rests and the error
        is raised as it is.
        """
        failures: list[str] = []
        for position in self.order():
            entry = self.chain[position]
            denied = False
            for step_model in self._models(position, model):
                for attempt in range(self.policy.max_retries + 1):
                    started = False
                    try:
                        async for item in ask(entry.provider, step_model):
                            started = True
                            yield item
                    except ProviderError as exc:
                        if started:
                            self._failed(position)
                            raise
                        delay = self._delay(exc, attempt, entry)
                        self._log_failure(entry, step_model, attempt, exc, delay)
                        if delay is None:
                            failures.append(f"{entry.provider.name}/{step_model}: {exc}")
                            denied = exc.status in (401, 403)
                            break
                        await self._sleep(delay)
                    else:
                        self._resting_until.pop(position, None)
                        return
                if denied:
                    break  # the other models of this provider share the refused key
            self._failed(position)
        raise self._exhausted(failures)

    @staticmethod
    def _log_failure(entry: ChainEntry, model: str, attempt: int, exc: ProviderError,
                     delay: float | None) -> None:
        log.warning("provider_failed provider=%s model=%s attempt=%d status=%s retry_in=%s",
                    entry.provider.name, model, attempt + 1, exc.status,
                    "none" if delay is None else f"{delay:.2f}")

    async def aclose(self) -> None:
        seen: set[int] = set()
        for entry in self.chain:
            if id(entry.provider) not in seen:
                seen.add(id(entry.provider))
                await entry.provider.aclose()
