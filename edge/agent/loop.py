"""The bounded tool-call loop (seed 000_a48630eb162deda3.txt section 5; seed 002 "最多 10 次").

Native tool calls when the provider supports them; otherwise the prompt-guided protocol: the
tools are described in the system prompt and ``<tool_call>{json}</tool_call>`` blocks are parsed
from the reply text, results going back as a ``[Tool results]`` user turn (seed 000 4.2).
Tool results are capped at ``result_limit`` characters with a note of what was cut, fixing the
seed's unbounded-tool-result weakness (9.2). Cancellation (``/stop``, a newer message, the
timeout) propagates into the running tool and the provider request as CancelledError.
"""

from __future__ import annotations

import json
import logging
import re
import uuid

from edge.providers.base import ChatMessage, ChatResponse, Provider, ToolCall
from edge.tools.base import Tool, ToolResult, ToolSpec, spec_of

log = logging.getLogger(__name__)

TOOL_RESULT_MAX_CHARS = 4_000
DEFAULT_MAX_TOOL_ITERATIONS = 10
TOOL_CALL_BLOCK = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)


def truncate(text: str, limit: int = TOOL_RESULT_MAX_CHARS) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[truncated {len(text) - limit} characters]"


def tool_instructions(specs: list[ToolSpec]) -> str:
    lines = ["## Tool Use Protocol", "To use a tool, reply with one block per call:",
             '<tool_call>\n{"name": "tool_name", "arguments": {...}}\n</tool_call>',
             "Results come back in <tool_result> blocks. Answer in plain text when done.",
             "Available tools:"]
    lines += [f"- {s.name}: {s.description} Parameters: {json.dumps(s.parameters)}" for s in specs]
    return "\n".join(lines)


def parse_text_tool_calls(text: str) -> tuple[str, list[ToolCall]]:
    """(text without the blocks, calls) from a prompt-guided reply; bad JSON becomes a call
    with unparseable arguments so the model is told."""
    calls = []
    for body in TOOL_CALL_BLOCK.findall(text):
        try:
            data = json.loads(body)
            name, args = data.get("name", ""), data.get("arguments", {})
            calls.append(ToolCall(f"text_{uuid.uuid4().hex[:8]}", str(name), json.dumps(args)))
        except (ValueError, AttributeError):
            calls.append(ToolCall(f"text_{uuid.uuid4().hex[:8]}", "", body))
    return TOOL_CALL_BLOCK.sub("", text).strip(), calls


async def execute_call(call: ToolCall, tools: dict[str, Tool], caller: str) -> ToolResult:
    tool = tools.get(call.name)
    if tool is None:
        return ToolResult(False, error=f"unknown tool {call.name!r}; available: {', '.join(tools)}")
    try:
        args = json.loads(call.arguments or "{}")
    except json.JSONDecodeError as exc:
        return ToolResult(False, error=f"arguments are not valid JSON: {exc.msg}")
    if not isinstance(args, dict):
        return ToolResult(False, error="arguments must be a JSON object")
    return await tool.execute(args, caller)


async def _model_turn(provider: Provider, messages: list[ChatMessage], specs: list[ToolSpec],
                      native: bool) -> ChatResponse:
    if native:
        return await provider.chat(messages, tools=specs)
    response = await provider.chat(messages)
    text, calls = parse_text_tool_calls(response.text)
    return ChatResponse(text, calls, response.usage)


async def run_tool_loop(provider: Provider, messages: list[ChatMessage], tools: list[Tool],
                        caller: str, max_iterations: int = DEFAULT_MAX_TOOL_ITERATIONS,
                        result_limit: int = TOOL_RESULT_MAX_CHARS,
                        specs: list[ToolSpec] | None = None) -> str:
    """Model turns and tools until the model answers in text; ``messages`` grows in place.
    ``messages[0]`` is the system prompt; for prompt-guided providers the tool protocol is
    appended to it. ``specs`` may be passed when the caller already has them."""
    by_name = {t.name: t for t in tools}
    specs = specs if specs is not None else [spec_of(t) for t in tools]
    native = getattr(provider, "supports_native_tools", True)
    if not native and specs:
        messages[0] = ChatMessage.system(f"{messages[0].content}\n\n{tool_instructions(specs)}")
    for _ in range(max_iterations):
        response = await _model_turn(provider, messages, specs, native)
        if not response.tool_calls:
            return response.text
        results = []
        for call in response.tool_calls:
            result = await execute_call(call, by_name, caller)
            log.info("tool_call tool=%s success=%s by=%s", call.name, result.success, caller)
            results.append((call, truncate(result.text, result_limit)))
        if native:
            messages.append(ChatMessage.assistant(response.text, response.tool_calls))
            messages.extend(ChatMessage.tool(call.id, text) for call, text in results)
        else:
            blocks = "\n".join(f'<tool_result name="{c.name}">\n{text}\n</tool_result>'
                               for c, text in results)
            messages.append(ChatMessage.assistant(response.text or "(tool calls)"))
            messages.append(ChatMessage.user(f"[Tool results]\n{blocks}"))
    return (f"I stopped after {max_iterations} tool-call rounds without a final answer; "
            "ask again more specifically.")
