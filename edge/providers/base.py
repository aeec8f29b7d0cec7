"""Provider protocol and chat types (seed 002_9a1873f4f488f98f.txt, "Provider" part).

One required method, :meth:`Provider.chat`; decorators (retry, routing) wrap a provider rather
than adding flags inside it.
"""

from __future__ import annotations

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
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0


@dataclass
class ChatResponse:
    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)


class ProviderError(EdgeError):
    """A provider call failed; the message is safe to show users (no keys, no request bodies)."""


@runtime_checkable
class Provider(Protocol):
    name: str
    model: str

    async def chat(self, messages: list[ChatMessage], tools: list[ToolSpec] | None = None) -> ChatResponse:
        """One model turn over the full message list (system prompt first)."""

    async def aclose(self) -> None: ...
