"""The conversation vocabulary shared by the agent, its tools and the providers: chat messages,
the tool calls a model asks for, and the tool specs it is offered. Plain data on the bottom floor:
this module imports nothing from ``edge``, so providers need not import tools (nor the reverse).

>>> ChatMessage.user("hi").role
'user'
>>> ToolCall("call_0", "gpio_read", '{"pin": "led"}').arguments_object()
{'pin': 'led'}
>>> ToolCall("call_1", "pins", "not json").arguments_object()
{}
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

Role = Literal["system", "user", "assistant", "tool"]


@dataclass(frozen=True)
class ToolSpec:
    """What a model is told about one tool: its name, what it does, its JSON-schema arguments."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: str
    """The arguments as the model sent them: a JSON object, as text."""
    signature: str | None = None
    """An opaque token the provider wants back with this call in the next request (Gemini's
    ``thoughtSignature``: Gemini 3 rejects a function-calling loop that drops it)."""

    def arguments_object(self) -> dict[str, Any]:
        """The arguments as a dict, for wire formats that carry objects ({} when unusable)."""
        try:
            value = json.loads(self.arguments or "{}")
        except json.JSONDecodeError:
            return {}
        return value if isinstance(value, dict) else {}


@dataclass
class ChatMessage:
    """One turn: ``assistant`` turns may carry tool calls, ``tool`` turns answer one by its id."""

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
