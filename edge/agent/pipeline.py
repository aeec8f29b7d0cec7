"""The message path, top-down (seed 000_a48630eb162deda3.txt section 3; seed 004):

1. direct command? answer it without the model;
2. no provider configured? say how to configure one;
3. append the user turn to the conversation history (capped, same-role turns merged);
4. build the system prompt from sections;
5. run the bounded tool-call loop;
6. record the reply in the history and return it.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Awaitable, Callable

from edge.agent.commands import CommandContext, run_command
from edge.agent.loop import run_tool_loop
from edge.agent.prompt import build_system_prompt
from edge.channels.base import ChannelMessage
from edge.hardware import Hardware
from edge.providers.base import ChatMessage, Provider, ProviderError
from edge.tools.base import Tool, spec_of

log = logging.getLogger(__name__)

MAX_HISTORY_TURNS = 50

NO_PROVIDER_REPLY = (
    "No language model is configured, so I can only run direct commands (/help lists them). "
    "To chat, set [provider] base_url and model in the config (for Ollama: "
    "base_url = \"http://127.0.0.1:11434/v1\"), or EDGE_PROVIDER__BASE_URL and "
    "EDGE_PROVIDER__MODEL, then restart.")


def append_turn(history: list[ChatMessage], message: ChatMessage) -> None:
    """Append, merging consecutive same-role turns and keeping the last MAX_HISTORY_TURNS."""
    if history and history[-1].role == message.role:
        history[-1] = ChatMessage(message.role, f"{history[-1].content}\n\n{message.content}")
    else:
        history.append(message)
    del history[:-MAX_HISTORY_TURNS]


class Agent:
    def __init__(self, tools: list[Tool], hardware: Hardware, provider: Provider | None,
                 status_text: Callable[[], Awaitable[str]], *, max_tool_iterations: int = 10,
                 instructions: str = ""):
        self.tools = tools
        self.hardware = hardware
        self.provider = provider
        self.status_text = status_text
        self.max_tool_iterations = max_tool_iterations
        self.instructions = instructions
        self.histories: dict[str, list[ChatMessage]] = defaultdict(list)

    async def handle(self, msg: ChannelMessage) -> str:
        ctx = CommandContext({t.name: t for t in self.tools}, self.status_text, msg.caller)
        reply = await run_command(msg.content, ctx)
        if reply is not None:
            return reply
        if self.provider is None:
            return NO_PROVIDER_REPLY
        history = self.histories[msg.conversation_key]
        append_turn(history, ChatMessage.user(msg.content))
        system = build_system_prompt([spec_of(t) for t in self.tools], self.hardware.status(),
                                     self.hardware.policy, self.provider.model, self.instructions)
        turn = [ChatMessage.system(system), *history]
        try:
            reply = await run_tool_loop(self.provider, turn, self.tools, msg.caller,
                                        self.max_tool_iterations)
        except ProviderError as exc:
            log.error("provider_failed by=%s error=%s", msg.caller, exc)
            history.pop()
            return f"The language model could not answer: {exc}"
        append_turn(history, ChatMessage.assistant(reply))
        return reply
