"""The Provider protocol, replies, stream events and provider errors.

:class:`Provider` is the whole model boundary: ``name``, ``model`` and :meth:`Provider.chat` are
required; streaming, context-overflow detection, key rotation and closing have defaults here,
inherited by every provider that subclasses the protocol (the wire formats and the decorators
that wrap them: retry and failover, routing, the run-time model switch). The message and tool
types are the shared vocabulary of :mod:`edge.core.messages`.

>>> import asyncio
>>> class Echo(Provider):
...     name, model = "echo", "echo-1"
...     async def chat(self, messages, tools=None, *, model=None):
...         return ChatResponse(messages[-1].content, model=model or self.model)
>>> asyncio.run(collect(Echo().stream([ChatMessage.user("hi")]))).text
'hi'
>>> Echo().is_context_overflow(ProviderError("prompt is too long: 250000 tokens", status=400))
True
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from edge.core.exc import EdgeError
from edge.core.messages import ChatMessage, ToolCall, ToolSpec


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0


@dataclass
class ChatResponse:
    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    """The model that answered (after routing and fallback); empty when unknown."""


@dataclass(frozen=True)
class TextDelta:
    """A piece of reply text, in order; join them for the draft shown so far."""

    text: str


@dataclass(frozen=True)
class ToolCallReady:
    """A complete tool call, emitted once its arguments have fully arrived."""

    call: ToolCall


@dataclass(frozen=True)
class StreamDone:
    """The last event: the whole reply, as :meth:`Provider.chat` would have returned it."""

    response: ChatResponse


StreamEvent = TextDelta | ToolCallReady | StreamDone


class ProviderError(EdgeError):
    """A provider call failed; the message is safe to show users (no keys, no request bodies).

    ``status`` is the HTTP status when there was one; ``retry_after`` the seconds the server asked
    us to wait; ``retryable`` says whether trying again later may succeed (429, 5xx, network).
    """

    def __init__(self, message: str, *, status: int | None = None,
                 retry_after: float | None = None, retryable: bool = False):
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after
        self.retryable = retryable


class StreamInterrupted(ProviderError):
    """The connection ended before the stream finished; ``partial_text`` is what had arrived."""

    def __init__(self, message: str, partial_text: str = ""):
        super().__init__(message, retryable=True)
        self.partial_text = partial_text


CONTEXT_OVERFLOW_PHRASES = (
    "context_length_exceeded", "context length", "maximum context", "context window",
    "prompt is too long", "input is too long", "too many tokens", "token limit exceeded",
    "exceeds the maximum number of tokens", "input token count", "request too large",
    "reduce the length of the messages",
)
"""How the APIs say the prompt does not fit: OpenAI ``context_length_exceeded`` / "maximum
context length", Anthropic "prompt is too long", Gemini "input token count exceeds...",
llama.cpp and Ollama "context window" / "context length" wording."""

OVERFLOW_STATUSES = (None, 400, 413, 422)
"""An overflow is a refused request (or an error with no status, such as a failed chain's)."""


def mentions_context_overflow(error: Exception) -> bool:
    """Whether ``error`` says the prompt is longer than the model's context window.

    >>> mentions_context_overflow(ProviderError("This model's maximum context length is 4096"))
    True
    >>> mentions_context_overflow(ProviderError("HTTP 500: context window busy", status=500))
    False
    """
    status = error.status if isinstance(error, ProviderError) else None
    text = str(error).lower()
    return status in OVERFLOW_STATUSES and any(p in text for p in CONTEXT_OVERFLOW_PHRASES)


class Provider(Protocol):
    """A language model behind one interface. Subclass it: ``chat`` (and ``name``, ``model``)
    are yours to write, the rest has working defaults a provider may override.

    ``model=`` on :meth:`chat` and :meth:`stream` asks for another model than ``self.model`` for
    one call (fallback lists and routes use it).
    """

    @property
    @abstractmethod
    def name(self) -> str:
        """Who answers, for logs and errors (the endpoint's configured name)."""
        ...

    @property
    @abstractmethod
    def model(self) -> str:
        """The model asked for when a call names none."""
        ...

    @abstractmethod
    async def chat(self, messages: Sequence[ChatMessage], tools: list[ToolSpec] | None = None,
                   *, model: str | None = None) -> ChatResponse:
        """One model turn over the full message list (system prompt first)."""
        ...

    async def stream(self, messages: Sequence[ChatMessage], tools: list[ToolSpec] | None = None,
                     *, model: str | None = None) -> AsyncIterator[StreamEvent]:
        """Text deltas, then complete tool calls, then :class:`StreamDone`.
        Default: one :meth:`chat`, told as those events."""
        response = await self.chat(messages, tools, model=model)
        if response.text:
            yield TextDelta(response.text)
        for call in response.tool_calls:
            yield ToolCallReady(call)
        yield StreamDone(response)

    def is_context_overflow(self, error: Exception) -> bool:
        """Did ``error`` say the prompt is too long? (The agent then compacts the history.)
        Default: :func:`mentions_context_overflow`."""
        return mentions_context_overflow(error)

    @property
    def compact_profile(self) -> bool:
        """Whether turns asked of it take the compact profile (a small local model,
        :mod:`edge.agent.compact`). Default: no."""
        return False

    def rotate_key(self) -> bool:
        """Move to the next API key (after a 429); False when there is no other key (default)."""
        return False

    async def aclose(self) -> None:
        """Release connections. Default: nothing to release."""
        return None


async def collect(events: AsyncIterator[StreamEvent]) -> ChatResponse:
    """Drain a stream and return its final response (for callers that want no deltas)."""
    final: ChatResponse | None = None
    async for event in events:
        if isinstance(event, StreamDone):
            final = event.response
    if final is None:
        raise StreamInterrupted("the stream ended without a final event")
    return final
