"""Provider protocol, chat types and stream events (seed 002_9a1873f4f488f98f.txt, "Provider" part).

One required method, :meth:`Provider.chat`; :class:`ProviderBase` derives the rest from it
(simple chat, chat with a system prompt, chat with history, streaming). Decorators (retry,
routing) wrap a provider rather than adding flags inside it.

>>> ChatMessage.user("hi").role
'user'
"""

from __future__ import annotations

import json

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

from edge.exc import EdgeError
from edge.tools.base import ToolSpec

Role = Literal["system", "user", "assistant", "tool"]


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: str
    """The arguments as the model sent them: a JSON object, as text."""
    signature: str | None = None
    """An opaque token the provider wants back with this call in the next request (Gemini's
    ``thoughtSignature``: Gemini 3 rejects a function-calling loop that drops it)."""

    def arguments_object(self) -> dict:
        """The arguments as a dict, for wire formats that carry objects ({} when unusable)."""
        try:
            value = json.loads(self.arguments or "{}")
        except json.JSONDecodeError:
            return {}
        return value if isinstance(value, dict) else {}


@dataclass
class ChatMessage:
    role: Role
    content: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_call_id: str | None = None

    @classmethod
    def system(cls, text: str) -> ChatMessage:
        return cls("system", text)

    @classmethod
    def user(cls, text: str) -> ChatMessage:
        return cls("user", text)

    @classmethod
    def assistant(cls, text: str, tool_calls: list[ToolCall] | None = None) -> ChatMessage:
        return cls("assistant", text, list(tool_calls or []))

    @classmethod
    def tool(cls, call_id: str, text: str) -> ChatMessage:
        return cls("tool", text, tool_call_id=call_id)


@dataclass(frozen=True)
class AssistantToolCalls:
    """An assistant turn that asked for tools (seed 002 ConversationMessage::AssistantToolCalls)."""

    text: str
    tool_calls: list[ToolCall]


@dataclass(frozen=True)
class ToolResultMessage:
    tool_call_id: str
    content: str


@dataclass(frozen=True)
class ToolResults:
    results: list[ToolResultMessage]


ConversationMessage = ChatMessage | AssistantToolCalls | ToolResults
"""One turn of a multi-turn conversation, as in seed 002; providers accept any mix of these."""


def as_chat_messages(conversation: Sequence[ConversationMessage]) -> list[ChatMessage]:
    """Flatten a conversation into the ChatMessage list every wire format starts from."""
    out: list[ChatMessage] = []
    for item in conversation:
        if isinstance(item, ChatMessage):
            out.append(item)
        elif isinstance(item, AssistantToolCalls):
            out.append(ChatMessage.assistant(item.text, item.tool_calls))
        elif isinstance(item, ToolResults):
            out.extend(ChatMessage.tool(r.tool_call_id, r.content) for r in item.results)
        else:
            raise TypeError(f"not a conversation message: {type(item).__name__}")
    return out


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


@runtime_checkable
class Provider(Protocol):
    name: str
    model: str

    async def chat(self, messages: list[ChatMessage], tools: list[ToolSpec] | None = None) -> ChatResponse:
        """One model turn over the full message list (system prompt first)."""

    async def aclose(self) -> None: ...


class ProviderBase:
    """Defaults built on :meth:`chat`, the one method a subclass must write.

    Subclasses may override :meth:`stream` with a real streaming call; ``model=`` overrides the
    configured model for one call (used by fallback lists and routes).
    """

    name: str = "provider"
    model: str = ""

    async def chat(self, messages: Sequence[ConversationMessage],
                   tools: list[ToolSpec] | None = None, *, model: str | None = None) -> ChatResponse:
        raise NotImplementedError

    async def chat_with_system(self, system_prompt: str | None, message: str, *,
                               model: str | None = None) -> str:
        messages = [ChatMessage.system(system_prompt)] if system_prompt else []
        messages.append(ChatMessage.user(message))
        return (await self.chat(messages, model=model)).text

    async def simple_chat(self, message: str, *, model: str | None = None) -> str:
        return await self.chat_with_system(None, message, model=model)

    async def chat_with_history(self, messages: Sequence[ConversationMessage], *,
                                model: str | None = None) -> str:
        return (await self.chat(messages, model=model)).text

    async def stream(self, messages: Sequence[ConversationMessage],
                     tools: list[ToolSpec] | None = None, *,
                     model: str | None = None) -> AsyncIterator[StreamEvent]:
        """Text deltas, then complete tool calls, then :class:`StreamDone`. Default: one chat."""
        response = await self.chat(messages, tools, model=model)
        if response.text:
            yield TextDelta(response.text)
        for call in response.tool_calls:
            yield ToolCallReady(call)
        yield StreamDone(response)

    async def aclose(self) -> None:
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
