"""The prompt-guided ``<tool_call>`` protocol for endpoints without native tool calling.

Tool descriptions go into the system prompt and the model answers with
``<tool_call>{"name": "gpio_write", "arguments": {"pin": "led", "value": "on"}}</tool_call>``.
Earlier tool turns are rendered back as text, so the history reads the same way to the model.

>>> text, calls = parse_tool_calls('ok <tool_call>{"name": "pins", "arguments": {}}</tool_call>')
>>> text, calls[0].name, calls[0].arguments
('ok', 'pins', '{}')
"""

from __future__ import annotations

import json
import re

from edge.core.messages import ChatMessage, ToolCall, ToolSpec

OPEN_TAG, CLOSE_TAG = "<tool_call>", "</tool_call>"
_BLOCK = re.compile(r"<tool_call>(.*?)(?:</tool_call>|$)", re.DOTALL)
_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$")


def tool_instructions(tools: list[ToolSpec]) -> str:
    """The system-prompt section that teaches the model the protocol and lists the tools."""
    lines = ["## Tool Use Protocol", "",
             "To use a tool, reply with one block per call, exactly like this:",
             f'{OPEN_TAG}{{"name": "TOOL_NAME", "arguments": {{"ARG": "VALUE"}}}}{CLOSE_TAG}',
             "Put nothing but that JSON inside the tags. You will get the result in a "
             "<tool_result> block; then answer the user in plain text without tags.", "",
             "### Available Tools", ""]
    for spec in tools:
        lines.append(f"- **{spec.name}**: {spec.description}")
        lines.append(f"  Parameters: {json.dumps(spec.parameters, separators=(',', ':'))}")
    return "\n".join(lines)


def parse_tool_calls(text: str) -> tuple[str, list[ToolCall]]:
    """Split a reply into its plain text and the tool calls in its ``<tool_call>`` blocks.

    Tolerates a code fence inside the block, a missing closing tag at the end of the reply,
    ``parameters`` for ``arguments``, and arguments sent as a JSON string. A block that is not
    a JSON object with a name is left in the text, so the user sees what the model said.
    """
    calls: list[ToolCall] = []
    kept: list[str] = []
    position = 0
    for match in _BLOCK.finditer(text):
        call = _call_from_block(match.group(1), len(calls))
        kept.append(text[position:match.start()] if call else text[position:match.end()])
        position = match.end()
        if call:
            calls.append(call)
    kept.append(text[position:])
    return "".join(kept).strip(), calls


def _call_from_block(block: str, index: int) -> ToolCall | None:
    try:
        body = json.loads(_FENCE.sub("", block.strip()))
    except json.JSONDecodeError:
        return None
    if not isinstance(body, dict) or not isinstance(body.get("name"), str):
        return None
    arguments = body.get("arguments", body.get("parameters", {}))
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments or "{}")
        except json.JSONDecodeError:
            return None
    return ToolCall(f"guided_{index}", body["name"], json.dumps(arguments or {}))


_FENCED = re.compile(r"```(?:json)?\s*(\{.*?\})\s*```", re.DOTALL)


def json_tool_calls(text: str, known: set[str] | frozenset[str]) -> tuple[str, list[ToolCall]]:
    r"""The calls a small model writes as a JSON object in its reply, fenced or bare
    (``{"name": "gpio_write", "arguments": {...}}``), naming a tool in ``known``; the text
    without them. Any other JSON is text.

    >>> text, calls = json_tool_calls('```json\n{"name": "gpio_read", "arguments": {"pin": '
    ...                               '"led"}}\n```', {"gpio_read"})
    >>> text, calls[0].name, calls[0].arguments
    ('', 'gpio_read', '{"pin": "led"}')
    >>> json_tool_calls('{"name": "rm_rf", "arguments": {}}', {"gpio_read"})[1]
    []
    """
    calls: list[ToolCall] = []
    spans: list[tuple[int, int]] = []
    candidates = [(m.start(), m.end(), m.group(1)) for m in _FENCED.finditer(text)]
    if not candidates:
        decoder = json.JSONDecoder()
        for start in (i for i, c in enumerate(text) if c == "{"):
            if any(a <= start < b for a, b, _ in candidates):
                continue
            try:
                _, end = decoder.raw_decode(text, start)
            except json.JSONDecodeError:
                continue
            candidates.append((start, end, text[start:end]))
    for start, end, body in candidates:
        call = _call_from_block(body, len(calls))
        if call is not None and call.name in known:
            calls.append(ToolCall(f"text_{len(calls)}", call.name, call.arguments))
            spans.append((start, end))
    kept, position = [], 0
    for start, end in spans:
        kept.append(text[position:start])
        position = end
    kept.append(text[position:])
    return "".join(kept).strip(), calls


def render_guided(messages: list[ChatMessage], tools: list[ToolSpec]) -> list[ChatMessage]:
    """Messages for a text-only endpoint: instructions in the system prompt, tool turns as text."""
    instructions = tool_instructions(tools)
    names = {c.id: c.name for m in messages for c in m.tool_calls}
    out: list[ChatMessage] = []
    if not messages or messages[0].role != "system":
        out.append(ChatMessage.system(instructions))
    for message in messages:
        if message.role == "system" and not out:
            out.append(ChatMessage.system(f"{message.content}\n\n{instructions}"))
        elif message.role == "assistant" and message.tool_calls:
            blocks = [f'{OPEN_TAG}{{"name": {json.dumps(c.name)}, "arguments": {c.arguments or "{}"}}}'
                      f"{CLOSE_TAG}" for c in message.tool_calls]
            out.append(ChatMessage.assistant("\n".join(filter(None, [message.content, *blocks]))))
        elif message.role == "tool":
            name = names.get(message.tool_call_id or "", "tool")
            result = f'<tool_result name="{name}">\n{message.content}\n</tool_result>'
            if out and out[-1].role == "user" and out[-1].content.startswith("<tool_result"):
                out[-1] = ChatMessage.user(f"{out[-1].content}\n{result}")
            else:
                out.append(ChatMessage.user(result))
        else:
            out.append(ChatMessage(message.role, message.content))
    return out


class GuidedTextFilter:
    """Passes streamed text through, holding back ``<tool_call>`` blocks (parsed at the end)."""

    def __init__(self) -> None:
        self._pending = ""
        self._inside = False

    def feed(self, piece: str) -> str:
        """The part of the text seen so far that is safe to show."""
        self._pending += piece
        shown: list[str] = []
        while self._pending:
            if self._inside:
                end = self._pending.find(CLOSE_TAG)
                if end < 0:
                    return "".join(shown)
                self._pending = self._pending[end + len(CLOSE_TAG):]
                self._inside = False
                continue
            start = self._pending.find(OPEN_TAG)
            if start >= 0:
                shown.append(self._pending[:start])
                self._pending = self._pending[start + len(OPEN_TAG):]
                self._inside = True
                continue
            hold = _partial_tag_length(self._pending)
            shown.append(self._pending[:len(self._pending) - hold])
            self._pending = self._pending[len(self._pending) - hold:]
            break
        return "".join(shown)


def _partial_tag_length(text: str) -> int:
    """How many trailing characters could be the start of ``<tool_call>``."""
    for length in range(min(len(OPEN_TAG) - 1, len(text)), 0, -1):
        if OPEN_TAG.startswith(text[-length:]):
            return length
    return 0


class ToolSupportMemory:
    """Endpoints found to reject the ``tools`` parameter, so later calls go prompt-guided at once."""

    def __init__(self) -> None:
        self._rejecting: set[str] = set()

    def rejects(self, endpoint: str) -> bool:
        return endpoint in self._rejecting

    def remember_rejection(self, endpoint: str) -> None:
        self._rejecting.add(endpoint)
