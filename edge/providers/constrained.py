"""Tool calls a small model cannot malform: llama.cpp's server turns a JSON schema in the
request's ``response_format`` into a grammar, so every token it samples keeps the reply inside
the schema. The schema here admits exactly one of: a call to one of the turn's tools with
arguments valid for that tool's parameters (pin names as enums, in the compact profile), or a
reply in words. The OpenAI-compatible provider asks for it for the llamacpp preset and reads the
answer back into a call or text, so the rest of the agent sees what a native endpoint gives.

>>> tools = [{"type": "function", "function": {"name": "gpio_write", "parameters": {
...     "type": "object", "properties": {"pin": {"enum": ["pump"]}}}}}]
>>> [option["properties"]["name"] for option in call_or_reply(tools)["json_schema"]["schema"]["anyOf"][:1]]
[{'const': 'gpio_write'}]
>>> read_constrained('{"name": "gpio_write", "arguments": {"pin": "pump"}}', {"gpio_write"})
('', [ToolCall(id='constrained_0', name='gpio_write', arguments='{"pin": "pump"}', signature=None)])
>>> read_constrained('{"reply": "The pump is off."}', {"gpio_write"})
('The pump is off.', [])
"""

from __future__ import annotations

import json
import re
from typing import Any

from edge.core.messages import ToolCall

_CUT_REPLY = re.compile(r'^\s*\{\s*"reply"\s*:\s*"(.*)', re.DOTALL)
REPLY_MAX_CHARS = 600
"""The longest reply in words the grammar admits (a short answer; the reply's budget is the
endpoint's ``max_tokens``)."""


def call_or_reply(wire_tools: list[dict[str, Any]]) -> dict[str, Any]:
    """The ``response_format`` for a request offering ``wire_tools`` (OpenAI's tool format)."""
    options: list[dict[str, Any]] = []
    for tool in wire_tools:
        function = tool["function"]
        parameters = function.get("parameters") or {"type": "object"}
        options.append({"type": "object", "properties": {
            "name": {"const": function["name"]}, "arguments": parameters},
            "required": ["name", "arguments"], "additionalProperties": False})
    options.append({"type": "object", "properties": {
        "reply": {"type": "string", "maxLength": REPLY_MAX_CHARS}},
        "required": ["reply"], "additionalProperties": False})
    return {"type": "json_schema",
            "json_schema": {"name": "tool_call_or_reply", "schema": {"anyOf": options}}}


def read_constrained(text: str, known: set[str] | frozenset[str]) -> tuple[str, list[ToolCall]]:
    """The reply's words and calls from an answer written under :func:`call_or_reply`; an answer
    that is not one (cut short by ``max_tokens``, or a server that ignored the schema) is text."""
    try:
        answer = json.loads(text)
    except json.JSONDecodeError:
        return _words_so_far(text), []
    if not isinstance(answer, dict):
        return text, []
    if isinstance(answer.get("reply"), str):
        return answer["reply"], []
    name, arguments = answer.get("name"), answer.get("arguments")
    if isinstance(name, str) and name in known and isinstance(arguments, dict):
        return "", [ToolCall("constrained_0", name, json.dumps(arguments))]
    return text, []


def _words_so_far(text: str) -> str:
    r"""A reply cut short by ``max_tokens`` (``{"reply": "The pump is o``): its words so far.

    >>> _words_so_far('{"reply": "The pump\\nis o')
    'The pump\nis o'
    """
    cut = _CUT_REPLY.match(text)
    if cut is None:
        return text
    words = cut.group(1).rstrip("\\")
    try:
        return str(json.loads(f'"{words}"'))
    except json.JSONDecodeError:
        return words
