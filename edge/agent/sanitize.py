"""Response sanitising: leftover tool-call markup and bare tool-call JSON never reach a person.

>>> sanitize_response('Done.<tool_call>{"name": "gpio_read", "arguments": {}}</tool_call>')
'Done.'
"""

from __future__ import annotations

import json
import re

TOOL_CALL_TAGS = re.compile(
    r"<(tool_call|toolcall|tool-call|invoke|function_call)\b[^>]*>.*?(</\1>|$)",
    re.DOTALL | re.IGNORECASE)
TOOL_RESULT_TAGS = re.compile(r"<tool_result\b[^>]*>.*?(</tool_result>|$)", re.DOTALL | re.IGNORECASE)
JSON_LINE = re.compile(r"^\s*(\{.*\})\s*$")


def _is_tool_json(text: str) -> bool:
    try:
        value = json.loads(text)
    except ValueError:
        return False
    return isinstance(value, dict) and "name" in value and ("arguments" in value or "parameters" in value)


def sanitize_response(text: str) -> str:
    text = TOOL_CALL_TAGS.sub("", text)
    text = TOOL_RESULT_TAGS.sub("", text)
    lines = [line for line in text.splitlines()
             if not ((m := JSON_LINE.match(line)) and _is_tool_json(m.group(1)))]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
